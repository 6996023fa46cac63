"""The runs of a window as the dashboard's charts show them: counts, success and the averages
per slice of time, how long runs took, which tools they used and how the ones that did not end
in an answer ended.

Everything is added up by the database (a few GROUP BY queries, a tool-usage count through
the JSON of each run's numbers), so a window of a hundred thousand runs costs the web process
a few hundred rows, never a loop over the runs. Slices are aligned on whole multiples of their
size since the Unix epoch, so an hour's slice starts on the hour whatever window is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Float, Integer, case, cast, func, select, true
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.store.outcome import UNANSWERED
from bot.store.traces import RUNS, RUNS_AND_SESSIONS, Match, ended, rate, succeeded

# Upper bounds (exclusive) of the latency histogram's bins, in ms; the last bin is open.
LATENCY_BINS_MS = (250, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 120_000)
ERROR_TEXT = 200  # characters of an error message the breakdown groups by
TOP_ERRORS = 20
JULIAN_UNIX_EPOCH = 2440587.5  # the Julian day of 1970-01-01T00:00Z


@dataclass(frozen=True)
class Slice:
    start: datetime
    runs: int
    ended: int  # of `runs`, those that ended (not waiting for a decision, not skipped)
    succeeded: int
    average_latency_ms: float | None
    average_reliability: float | None

    @property
    def success_rate(self) -> float | None:
        return rate(self.succeeded, self.ended)


@dataclass(frozen=True)
class Series:
    """`latency` is one count per bin of `LATENCY_BINS_MS` plus the open last one; `tools`
    and `errors` are sorted, most first; an error is (finish reason, message, runs)."""

    bucket_s: int
    slices: list[Slice]
    latency: list[int]
    tools: list[tuple[str, int]]
    errors: list[tuple[str, str | None, int]]


def epoch_seconds(dialect: str, column: Any) -> ColumnElement[Any]:
    """`column` (a UTC time) as seconds since the Unix epoch, in the database's own SQL."""
    if dialect == "postgresql":
        return cast(func.extract("epoch", column), Float)
    return (func.julianday(column) - JULIAN_UNIX_EPOCH) * 86400.0


def slice_of(dialect: str, seconds: ColumnElement[Any], bucket_s: int) -> ColumnElement[int]:
    """The number of the slice a time falls in: seconds // bucket_s (times are past 1970, so
    SQLite's truncating cast is a floor)."""
    ratio = seconds / float(bucket_s)
    return cast(func.floor(ratio) if dialect == "postgresql" else ratio, Integer)


def latency_bin() -> ColumnElement[int]:
    """The histogram bin of a run's latency (0 for under 250 ms, … the last for the rest)."""
    whens = [(RUNS.c.latency_ms < bound, n) for n, bound in enumerate(LATENCY_BINS_MS)]
    return case(*whens, else_=len(LATENCY_BINS_MS))


def tool_counts(dialect: str) -> Any:
    """The (key, value) rows of each run's `metrics.tool_usage` object in its trace."""
    if dialect == "postgresql":
        usage = RUNS.c.trace[("metrics", "tool_usage")]
        return func.json_each_text(usage).table_valued("key", "value")
    return func.json_each(RUNS.c.trace, "$.metrics.tool_usage").table_valued("key", "value")


class RunSeries:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name

    async def series(
        self, start: datetime, end: datetime, bucket_s: int, match: Match | None = None
    ) -> Series:
        within = (match or Match()).where(start, end)
        async with self.engine.connect() as db:
            slices = await self._slices(db, within, start, end, bucket_s)
            latency = await self._latency(db, within)
            tools = await self._tools(db, within)
            errors = await self._errors(db, within)
        return Series(bucket_s, slices, latency, tools, errors)

    async def _slices(
        self, db: AsyncConnection, within: ColumnElement[bool], start: datetime, end: datetime,
        bucket_s: int,
    ) -> list[Slice]:  # fmt: skip
        seconds = epoch_seconds(self.dialect, RUNS.c.started_at)
        numbered = (
            select(
                slice_of(self.dialect, seconds, bucket_s).label("n"),
                RUNS.c.status,
                RUNS.c.latency_ms,
                RUNS.c.reliability,
            )
            .select_from(RUNS_AND_SESSIONS)
            .where(within)
            .subquery()
        )
        query = select(
            numbered.c.n,
            func.count(),
            ended(numbered.c.status),
            succeeded(numbered.c.status),
            func.avg(numbered.c.latency_ms),
            func.avg(numbered.c.reliability),
        ).group_by(numbered.c.n)
        found = {int(row[0]): row[1:] for row in await db.execute(query)}
        first, last = int(start.timestamp()) // bucket_s, -(-int(end.timestamp()) // bucket_s)
        slices = []
        for n in range(first, max(last, first + 1)):
            count, finished, completed, latency, reliability = found.get(n, (0, 0, 0, None, None))
            slices.append(
                Slice(
                    start=datetime.fromtimestamp(n * bucket_s, UTC),
                    runs=int(count),
                    ended=int(finished or 0),
                    succeeded=int(completed or 0),
                    average_latency_ms=None if latency is None else float(latency),
                    average_reliability=None if reliability is None else float(reliability),
                )
            )
        return slices

    async def _latency(self, db: AsyncConnection, within: ColumnElement[bool]) -> list[int]:
        binned = select(latency_bin().label("bin")).select_from(RUNS_AND_SESSIONS).where(within)
        inner = binned.subquery()
        query = select(inner.c.bin, func.count()).group_by(inner.c.bin)
        counts = [0] * (len(LATENCY_BINS_MS) + 1)
        for number, count in await db.execute(query):
            counts[int(number)] = int(count)
        return counts

    async def _tools(
        self, db: AsyncConnection, within: ColumnElement[bool]
    ) -> list[tuple[str, int]]:
        usage = tool_counts(self.dialect)
        calls = func.sum(cast(usage.c.value, Integer))
        query = (
            select(usage.c.key, calls)
            .select_from(RUNS_AND_SESSIONS.join(usage, true()))
            .where(within)
            .group_by(usage.c.key)
        )
        rows = [(str(name), int(count or 0)) for name, count in await db.execute(query)]
        return sorted(rows, key=lambda row: (-row[1], row[0]))

    async def _errors(
        self, db: AsyncConnection, within: ColumnElement[bool]
    ) -> list[tuple[str, str | None, int]]:
        message = func.substr(RUNS.c.error, 1, ERROR_TEXT)
        troubled = RUNS.c.status.in_(UNANSWERED)  # an answer cut at max_tokens is an answer
        inner = (
            select(RUNS.c.finish_reason.label("reason"), message.label("message"))
            .select_from(RUNS_AND_SESSIONS)
            .where(within & troubled)
            .subquery()
        )
        runs = func.count().label("runs")
        query = (
            select(inner.c.reason, inner.c.message, runs)
            .group_by(inner.c.reason, inner.c.message)
            .order_by(runs.desc(), inner.c.reason)
            .limit(TOP_ERRORS)
        )
        return [(str(r), m, int(n)) for r, m, n in await db.execute(query)]
