"""Pick-up latency: from a message accepted into Redis to the first event of its turn.

Measured idle and while hundreds of long turns stream on the same workers, to show that
long turns do not starve new messages (drain jobs are short wake-ups; turns run outside
arq). Real redis-server, real worker processes, the fake model in its own process. Sampling
starts once both workers announced they are ready (a fixed wait would put their start-up
into the idle tail), and under load once every long turn has begun streaming. Target: p99
under 250 ms, idle and under load. Run with `make bench`, or
`python -m tests.bench.pickup [LONG_TURNS]`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arq.connections import ArqRedis, RedisSettings, create_pool

from bot import keys
from bot.envelope import Envelope, Sender
from bot.mailbox import Mailbox
from tests.bench.processes import DEADLINE_S, environment, fake_model, start_workers, stop
from tests.bench.table import Figure, percentile, report, samples
from tests.support.redis_server import RedisServer

LONG_TURNS = int(sys.argv[1]) if len(sys.argv) > 1 else samples(300, 20)
SAMPLES, WORKERS = samples(100, 10), 2
TARGET_MS = 250
FIGURES = (
    "pick-up idle: median",
    "pick-up idle: p99",
    "pick-up under long turns: median",
    "pick-up under long turns: p99",
)


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


async def sample(mailbox: Mailbox, label: str, tag: str, name: str) -> None:
    values = [await first_event_ms(mailbox, f"bench:{tag}:{n}", "hello") for n in range(SAMPLES)]
    p99 = percentile(values, 0.99)
    print(
        f"{label:34} p50 {statistics.median(values):6.1f} ms   "
        f"p95 {percentile(values, 0.95):6.1f} ms   p99 {p99:6.1f} ms   max {max(values):6.1f} ms"
    )
    report(
        Figure(f"{name}: median", statistics.median(values), "ms"),
        Figure(f"{name}: p99", p99, "ms", TARGET_MS),
    )


async def long_turns_begun(pool: ArqRedis, count: int) -> None:
    """Once every long turn has its first event: they all stream while the busy sample runs."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        pipe = pool.pipeline(transaction=False)
        for n in range(count):
            pipe.exists(keys.session(f"bench:long:{n}", "events"))
        if sum(await pipe.execute()) == count:
            return
        await asyncio.sleep(0.05)
    raise RuntimeError(f"the long turns had not all begun after {DEADLINE_S} s")


async def submit_long_turns(mailbox: Mailbox, count: int) -> None:
    for n in range(count):
        await mailbox.submit(
            Envelope(
                id=f"long-{n}",
                session=f"bench:long:{n}",
                text="slowly please",
                sender=Sender(id="bench:u"),
            )
        )


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        fake, url = await fake_model()
        pool = await create_pool(RedisSettings.from_dsn(server.url))
        mailbox = Mailbox(pool, pool)
        workers: list[asyncio.subprocess.Process] = []
        try:
            workers, _ = await start_workers(WORKERS, environment(server.url, tmp, url), server.url)
            print(f"{WORKERS} workers, poll_delay 0.05 s; first event of a turn after submit")
            await sample(mailbox, "idle", "idle", "pick-up idle")
            await submit_long_turns(mailbox, LONG_TURNS)
            await long_turns_begun(pool, LONG_TURNS)
            label = f"with {LONG_TURNS} long turns streaming"
            await sample(mailbox, label, "busy", "pick-up under long turns")
            pipe = pool.pipeline(transaction=False)
            for n in range(LONG_TURNS):
                pipe.exists(keys.session(f"bench:long:{n}", "lease"))
            running = sum(await pipe.execute())
            print(f"(long turns still holding their session while sampling: {running})")
        finally:
            await stop([*workers, fake])
            await pool.aclose()
            server.stop()


if __name__ == "__main__":
    asyncio.run(main())
