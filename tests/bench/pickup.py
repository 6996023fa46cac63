"""Pick-up latency: from a message accepted into Redis to the first event of its turn.

Measured idle and while hundreds of long turns stream on the same workers, to show that
long turns do not starve new messages (drain jobs are short wake-ups; turns run outside
arq). Real redis-server, real worker processes, the fake model in its own process.
Run with `make bench`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arq.connections import RedisSettings, create_pool

from bot import keys
from bot.envelope import Envelope, Sender
from bot.mailbox import Mailbox
from tests.bench.processes import environment, fake_model
from tests.support.redis_server import RedisServer

LONG_TURNS = int(sys.argv[1]) if len(sys.argv) > 1 else 300
SAMPLES, WORKERS = 30, 2


async def first_event_ms(mailbox: Mailbox, session: str, text: str) -> float:
    events = keys.session(session, "events")
    submitted = time.time()
    await mailbox.submit(
        Envelope(
            id=f"{session}-{submitted}", session=session, text=text, sender=Sender(id="bench:u")
        )
    )
    while True:
        first = await mailbox.redis.xrange(events, count=1)
        if first:
            return int(first[0][0].decode().split("-")[0]) - submitted * 1000
        await asyncio.sleep(0.002)


async def sample(mailbox: Mailbox, label: str, tag: str) -> None:
    values = [await first_event_ms(mailbox, f"bench:{tag}:{n}", "hello") for n in range(SAMPLES)]
    print(
        f"{label:34} p50 {statistics.median(values):6.1f} ms   "
        f"p95 {statistics.quantiles(values, n=20)[18]:6.1f} ms   max {max(values):6.1f} ms"
    )


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        fake, url = await fake_model()
        env = environment(server.url, tmp, url)
        workers = [
            await asyncio.create_subprocess_exec(sys.executable, "-m", "worker", "worker", env=env)
            for _ in range(WORKERS)
        ]
        pool = await create_pool(RedisSettings.from_dsn(server.url))
        mailbox = Mailbox(pool, pool)
        try:
            await asyncio.sleep(3)
            print(f"{WORKERS} workers, poll_delay 0.05 s; first event of a turn after submit")
            await sample(mailbox, "idle", "idle")
            for n in range(LONG_TURNS):
                await mailbox.submit(
                    Envelope(
                        id=f"long-{n}",
                        session=f"bench:long:{n}",
                        text="slowly please",
                        sender=Sender(id="bench:u"),
                    )
                )
            await asyncio.sleep(2)
            await sample(mailbox, f"with {LONG_TURNS} long turns streaming", "busy")
            running = sum(
                [
                    await pool.exists(keys.session(f"bench:long:{n}", "lease"))
                    for n in range(LONG_TURNS)
                ]
            )
            print(f"(long turns still holding their session while sampling: {running})")
        finally:
            for worker in workers:
                worker.terminate()
                await worker.wait()
            fake.terminate()
            await fake.wait()
            await pool.aclose()
            server.stop()


if __name__ == "__main__":
    asyncio.run(main())
