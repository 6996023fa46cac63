"""Traces: how fast one is read back, laid out, and how fast a window of runs is summed.

A SQLite file of its own gets 1,000 runs recorded the way a worker records them (through
`History.record`), each with a trace of 100 nodes (one model call and 99 tool calls). Three
figures, each the median and the 95th percentile of many tries:
- "read": one run's trace from the database (`Traces.of_run`, what `GET /api/traces/{id}`
  does before answering);
- "layout": placing its 100 nodes for drawing (`bot.trace.graph.layout`);
- "window": `/api/metrics/runs`' query over all 1,000 runs (aggregates and a page of 50).

Run with `make bench`, or `python -m tests.bench.traces`.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bot.config.settings import Settings
from bot.store.database import open_database
from bot.store.traces import Traces
from bot.trace.builder import TraceBuilder
from bot.trace.graph import layout
from bot.vocabulary import events as ev
from bot.vocabulary.runs import RunRecord, SessionInfo
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage
from tests.bench.table import Figure, percentile, report, samples

RUNS = samples(1_000, 50)
TRIES = samples(200, 10)
FIGURES = ("trace read: p95", "100-node trace layout: p95", "runs window: p95")


def hundred_nodes() -> TraceBuilder:
    builder = TraceBuilder()
    builder.see(ev.Iteration(number=1))
    for n in range(99):
        call = ev.ToolCallStart(call_id=str(n), name="calculator", arguments={"expression": "1+1"})
        builder.see(call)
        builder.see(ev.ToolCallResult(call_id=str(n), name="calculator", content="2"))
    builder.see(ev.Completed(finish_reason="end_turn", iterations=1, usage=Usage(100, 20)))
    return builder


async def timed(work: Callable[[], Awaitable[object]]) -> list[float]:
    took = []
    for _ in range(TRIES):
        start = time.perf_counter()
        await work()
        took.append((time.perf_counter() - start) * 1000)
    return took


def show(name: str, took: list[float], figure: str, limit: float | None) -> None:
    p95 = percentile(took, 0.95)
    print(f"{name:8} median {statistics.median(took):7.2f} ms   p95 {p95:7.2f} ms")
    report(Figure(f"{figure}: p95", p95, "ms", limit))


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.db'}"
        database = await open_database(Settings(_env_file=None, database_url=url))
        trace = hundred_nodes().trace
        now = time.time()
        for n in range(RUNS):
            record = RunRecord(
                where=SessionInfo(f"http:bench-{n % 50}", "http"),
                envelope_ids=[f"m{n}"],
                trigger="message", sender="http:bench", model="claude-test",
                finish_reason="end_turn", iterations=1, usage=Usage(100, 20),
                started_at=now - n, finished_at=now - n + 1.5, trace=trace,
            )  # fmt: skip
            await database.history.record(SessionState(), record)
        traces = Traces(database.engine)
        one = RunRecord(
            SessionInfo("http:bench-0", "http"), ["m0"], "message", "", "m", "end_turn", 1,
            Usage(), now, now,
        ).id  # fmt: skip
        found = await traces.of_run(one)
        assert found is not None and found.trace is not None
        stored = found.trace
        print(f"{RUNS} runs, a trace of {len(stored['nodes'])} nodes each (SQLite)")
        show("read", await timed(lambda: traces.of_run(one)), "trace read", 100)

        async def place() -> object:
            return layout(stored)

        show("layout", await timed(place), "100-node trace layout", 500)
        end = datetime.now(UTC) + timedelta(minutes=1)
        start = end - timedelta(days=1)
        window = await timed(lambda: traces.window(start, end, 0, 50))
        show("window", window, "runs window", None)
        await database.aclose()


if __name__ == "__main__":
    asyncio.run(main())
