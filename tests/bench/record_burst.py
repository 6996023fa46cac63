"""A new turn's reads while many runs are recorded at once, as when long turns begun together
end together: how long a read waits, and the CPU each record costs the worker.

Every record waits for SQLite's one write lock; a read must not wait behind them for a pooled
connection (`bot.store.engine.writers`). SQLite file, in this process. Run with `make bench`,
or `python -m tests.bench.record_burst [RUNS]`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time

from bot.config.settings import Settings
from bot.store.database import open_database
from bot.store.people import People
from bot.trace.builder import TraceBuilder
from bot.vocabulary import events as ev
from bot.vocabulary.messages import Message, TextBlock
from bot.vocabulary.runs import RunRecord, SessionInfo
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage
from tests.bench.table import Figure, percentile, report, samples

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else samples(150, 20)
READS = samples(20, 5)
FIGURES = ("SQLite: a turn's read while runs are recorded, max", "SQLite: CPU per record")


def _ended(n: int) -> tuple[SessionState, RunRecord]:
    """A long turn's state and run as it ends: the question, a 1,000-character answer."""
    state = SessionState(
        messages=[
            Message(role="user", content=[TextBlock(text="slowly please")]),
            Message(role="assistant", content=[TextBlock(text="word " * 200)]),
        ]
    )
    trace = TraceBuilder()
    trace.see(ev.Iteration(number=1))
    trace.see(ev.Completed(finish_reason=ev.FinishReason.END_TURN, iterations=1, usage=Usage()))
    now = time.time()
    where = SessionInfo(f"bench:{n}", "http", "private", "slowly please")
    run = RunRecord(
        where, [f"e{n}"], "message", "bench:u", "claude-bench", "end_turn", 1,
        Usage(10, 200), now - 10, now, trace=trace.trace,
    )  # fmt: skip
    return state, run


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{tmp}/p.db")
        database = await open_database(settings)
        people = People(database.engine)
        try:
            await people.preferences("warm")  # the pool's first connection is made
            ended = [_ended(n) for n in range(RUNS)]
            cpu = time.process_time()
            recording = [asyncio.create_task(database.history.record(s, r)) for s, r in ended]
            await asyncio.sleep(0)  # every record has begun
            waits = []
            for _ in range(READS):
                started = time.perf_counter()
                await people.preferences("bench:u")
                waits.append((time.perf_counter() - started) * 1000)
            await asyncio.gather(*recording)
            per_record = (time.process_time() - cpu) * 1000 / RUNS
        finally:
            await database.aclose()
    print(
        f"{RUNS} runs recorded at once; a turn's read meanwhile: first {waits[0]:.1f} ms, "
        f"median {statistics.median(waits):.1f} ms, p95 {percentile(waits, 0.95):.1f} ms, "
        f"max {max(waits):.1f} ms; {per_record:.2f} ms CPU per record"
    )
    report(
        Figure(FIGURES[0], max(waits), "ms"),
        Figure(FIGURES[1], per_record, "ms"),
    )


if __name__ == "__main__":
    asyncio.run(main())
