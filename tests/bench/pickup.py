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

from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.vocabulary.envelope import Envelope, Sender
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


async def first_event_ms(mailbox: Mailbox, session: str, text: str) -> tuple[float, float]:
    """When the message was submitted (epoch s), and the ms to its turn's first event."""
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
            return submitted, int(first[0][0].decode().split("-")[0]) - submitted * 1000
        await asyncio.sleep(0.002)


Sample = tuple[float, float]  # submitted at (epoch s), ms to the first event


async def sample(mailbox: Mailbox, label: str, tag: str, name: str) -> list[Sample]:
    taken = [await first_event_ms(mailbox, f"bench:{tag}:{n}", "hello") for n in range(SAMPLES)]
    values = [ms for _, ms in taken]
    p99 = percentile(values, 0.99)
    print(
        f"{label:34} p50 {statistics.median(values):6.1f} ms   "
        f"p95 {percentile(values, 0.95):6.1f} ms   p99 {p99:6.1f} ms   max {max(values):6.1f} ms"
    )
    report(
        Figure(f"{name}: median", statistics.median(values), "ms"),
        Figure(f"{name}: p99", p99, "ms", TARGET_MS),
    )
    return taken


async def long_turn_ends(pool: ArqRedis, count: int) -> list[float]:
    """When each long turn's last event was written (epoch s), once all have ended."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        pipe = pool.pipeline(transaction=False)
        for n in range(count):
            pipe.exists(keys.session(f"bench:long:{n}", "lease"))
        if sum(await pipe.execute()) == 0:
            break
        await asyncio.sleep(0.1)
    pipe = pool.pipeline(transaction=False)
    for n in range(count):
        pipe.xrevrange(keys.session(f"bench:long:{n}", "events"), count=1)
    return [int(last[0][0].decode().split("-")[0]) / 1000 for last in await pipe.execute() if last]


def show_slowest(taken: list[Sample], ends: list[float], shown: int = 5) -> None:
    """The slowest samples beside how many long turns ended while each waited: the tail
    under load is where the long turns, begun together, end together."""
    if not ends:  # their event streams were gone: nothing to set the samples beside
        print("no long turn's end was found; the slowest samples are not shown beside them")
        return
    print(f"the {shown} slowest samples under load, and the long turns that ended meanwhile:")
    for submitted, ms in sorted(taken, key=lambda each: each[1], reverse=True)[:shown]:
        ended = sum(1 for end in ends if submitted <= end <= submitted + ms / 1000)
        print(f"  {ms:7.1f} ms   {ended:3} of {len(ends)} ended")
    first, last = min(ends), max(ends)
    during = sum(1 for submitted, _ in taken if first <= submitted <= last)
    print(f"  the long turns ended over {last - first:.2f} s, while {during} samples were taken")


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
            print(f"{WORKERS} workers, the default settings; first event of a turn after submit")
            await sample(mailbox, "idle", "idle", "pick-up idle")
            await submit_long_turns(mailbox, LONG_TURNS)
            await long_turns_begun(pool, LONG_TURNS)
            label = f"with {LONG_TURNS} long turns streaming"
            taken = await sample(mailbox, label, "busy", "pick-up under long turns")
            show_slowest(taken, await long_turn_ends(pool, LONG_TURNS))
        finally:
            await stop([*workers, fake])
            await pool.aclose()
            server.stop()


if __name__ == "__main__":
    asyncio.run(main())
