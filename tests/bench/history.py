"""What the durable record costs a turn, and how fast it answers, on SQLite and PostgreSQL.

Each run adds a user message and a 600-character answer, as a chat turn does; the record is
written after the reply has streamed, so its time is added to how long the session's lease is
held, not to what the user waits for. Run with `make bench`.

What the benchmark's process imported and made before it measures leaves the collector's sight
(`gc.freeze`), as a worker's start-up does once it is ready: otherwise a full collection over
the benchmark's own objects (70 ms) lands in one of the 20 timed calls, whose p95 is their
slowest.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bot.config.settings import Settings
from bot.store.database import Database, open_database
from bot.store.history import RunRecord, SessionInfo
from bot.vocabulary.messages import Message, TextBlock
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage
from tests.bench.table import Figure, percentile, report, samples
from tests.support.postgres_server import PostgresServer, find_bindir

SESSIONS, RUNS = samples(20, 3), samples(50, 10)
RESTORED = f"tg:{min(7, SESSIONS - 1)}"  # the session rebuilt
FIGURES = ("SQLite: record one run, p95", "SQLite: rebuild a session, p95")
ANSWER = "An answer of some length. " * 24


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[int(len(ordered) * 0.95)]
    return f"median {statistics.median(ordered) * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms"


async def _fill(database: Database) -> list[float]:
    timings = []
    for s in range(SESSIONS):
        state, key = SessionState(), f"tg:{s}"
        for n in range(RUNS):
            usage = Usage(input_tokens=1200, output_tokens=150, cache_read_tokens=9000)
            state.messages.append(Message(role="user", content=[TextBlock(text=f"q{n}")]))
            state.messages.append(
                Message(role="assistant", content=[TextBlock(text=ANSWER)], usage=usage)
            )
            now = time.time()
            record = RunRecord(
                SessionInfo(key, "tg"), [f"e{n}"], "message", "tg:1", "claude-sonnet-4-5",
                "end_turn", 1, usage, now, now,
            )  # fmt: skip
            started = time.perf_counter()
            await database.history.record(state, record)
            timings.append(time.perf_counter() - started)
    return timings


async def _timed(work: Callable[[], Awaitable[object]], times: int = 20) -> list[float]:
    samples = []
    for _ in range(times):
        started = time.perf_counter()
        await work()
        samples.append(time.perf_counter() - started)
    return samples


async def measure(name: str, url: str) -> None:
    database = await open_database(Settings(_env_file=None, database_url=url))
    gc.collect()
    gc.freeze()
    try:
        records = await _fill(database)
        restore = await _timed(lambda: database.history.restore(RESTORED))
        page = await _timed(lambda: database.archive.sessions(0, 20))
        stats = await _timed(database.archive.stats)
        restored = await database.history.restore(RESTORED)
        assert restored is not None and len(restored.messages) == 2 * RUNS
    finally:
        await database.aclose()
    print(f"{name} ({SESSIONS} sessions x {RUNS} runs, {2 * SESSIONS * RUNS} messages):")
    print(f"  record one run:               {_ms(records)}")
    print(f"  rebuild a {2 * RUNS}-message session: {_ms(restore)}")
    print(f"  list a page of sessions:      {_ms(page)}")
    print(f"  stats over everything:        {_ms(stats)}")
    engine = name.split(maxsplit=1)[0]
    report(
        Figure(f"{engine}: record one run, p95", percentile(records, 0.95) * 1000, "ms"),
        Figure(f"{engine}: rebuild a session, p95", percentile(restore, 0.95) * 1000, "ms"),
    )


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        await measure("SQLite (WAL)", f"sqlite+aiosqlite:///{Path(tmp)}/bench.db")
    bindir = find_bindir()
    if bindir is None:
        print("PostgreSQL: not installed, skipped")
        return
    server = PostgresServer(bindir)
    try:
        server.start()
        await measure("PostgreSQL (fsync off)", server.create_database())
    finally:
        server.stop()
        server.remove()


if __name__ == "__main__":
    asyncio.run(main())
