"""The cost of reading the mailboxes' backlog (`parley_queue_depth`) at scrape time.

A real redis-server holds many idle sessions (state and options, nothing queued) and a
growing number of sessions with envelopes waiting, submitted through the real mailbox. The
backlog is read the way `/metrics` reads it (the armed set, a page per Lua call): the time
a read takes and the time Redis spent in its scripts. For comparison, a SCAN of the whole
keyspace for inboxes, the approach it avoids, is timed too.
Run with `make bench`, or `python -m tests.bench.backlog [IDLE_SESSIONS]`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bot.mailbox.backlog import backlog
from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.redis.results import done
from bot.vocabulary.envelope import Envelope, Sender
from tests.bench.table import Figure, quick, report, samples
from tests.support.redis_server import RedisServer

IDLE = int(sys.argv[1]) if len(sys.argv) > 1 else samples(50_000, 1_000)
WAITING = (0, 100) if quick() else (0, 100, 1_000, 10_000)
READS = samples(15, 3)
FIGURES = ("backlog read, most sessions waiting: median",)


class NoJobs:
    """No worker runs: the drain jobs asked for are not needed here."""

    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> None:
        return None


async def idle_sessions(redis: Redis, count: int) -> None:
    """Sessions that have talked before and wait for nothing: state and options only."""
    for start in range(0, count, 1000):
        pipe = redis.pipeline(transaction=False)
        for n in range(start, min(start + 1000, count)):
            pipe.set(keys.session(f"bench:idle:{n}", "state"), '{"messages": []}')
            pipe.hset(keys.session(f"bench:idle:{n}", "options"), "model", "claude-bench")
        await pipe.execute()


async def median_ms(read: Any) -> float:
    times = []
    for _ in range(READS):
        started = time.perf_counter()
        await read()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


async def script_usec(redis: Redis) -> int:
    """Microseconds Redis has spent in scripts so far (the backlog's pages)."""
    stats = await redis.info("commandstats")
    return sum(int(v["usec"]) for k, v in stats.items() if k in ("cmdstat_evalsha", "cmdstat_eval"))


async def scan_inboxes(redis: Redis) -> int:
    """What the backlog would cost without the armed set: every key looked at."""
    total = 0
    async for name in redis.scan_iter(match=keys.session("*", "inbox"), count=1000):
        total += int(await done(redis.llen(name)))
    return total


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp), "--appendonly", "no")
        server.start()
        redis = Redis.from_url(server.url)
        mailbox = Mailbox(redis, NoJobs())
        try:
            await idle_sessions(redis, IDLE)
            print(f"{IDLE} idle sessions; median of {READS} reads")
            submitted = 0
            for waiting in WAITING:
                for n in range(submitted, waiting):
                    session = f"bench:busy:{n}"
                    for m in range(2):
                        await mailbox.submit(
                            Envelope(
                                id=f"{session}-{m}",
                                session=session,
                                text="hello",
                                sender=Sender(id="bench:u"),
                            )
                        )
                submitted = max(submitted, waiting)
                found = await backlog(redis)
                assert found.sessions == waiting and found.envelopes == 2 * waiting, found
                before = await script_usec(redis)
                armed = await median_ms(lambda: backlog(redis))
                held = (await script_usec(redis) - before) / READS / 1000
                scanned = await median_ms(lambda: scan_inboxes(redis))
                print(
                    f"{waiting:6} sessions waiting ({found.envelopes:6} envelopes): "
                    f"backlog {armed:7.2f} ms, Redis busy {held:6.2f} ms   "
                    f"(a keyspace SCAN: {scanned:8.1f} ms)"
                )
            report(Figure("backlog read, most sessions waiting: median", armed, "ms"))
        finally:
            await redis.aclose()
            server.stop()


if __name__ == "__main__":
    asyncio.run(main())
