"""The runs of a window as the dashboard's charts show them: counts, success and the averages
per slice of time, how long runs took, which tools they used and how the ones that did not end
in an answer ended.

Everything is added up by the database, so a window of a hundred thousand runs costs the web
process a few hundred rows, never a loop over the runs; and read from indexes alone
(`schema.WINDOW_INDEX`, and on SQLite `schema.OUTCOMES_INDEX`), never from the runs' rows,
each with its trace. Three queries, read at once on connections of their own: the slices and
the latency histogram in one pass (grouped by slice and bin), the tools (each run's small
`tool_usage`, grouped by its value first: a window has few distinct ones, so its JSON is read
a few hundred times, not once a run) and the errors. Slices are aligned on whole multiples of
their size since the Unix epoch, so an hour's slice starts on the hour whatever window is
asked for.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    ColumnElement,
    FromClause,
    Integer,
    Select,
    Text,
    case,
    cast,
    func,
    select,
    true,
)
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.outcome import UNANSWERED
from bot.store.traces import RUNS, Match, ended, rate, succeeded

# Upper bounds (exclusive) of the latency histogram's bins, in ms; the last bin is open.
LATENCY_BINS_MS = (250, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 120_000)
ERROR_TEXT = 200  # characters of an error message the breakdown groups by
TOP_ERRORS = 20


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


def epoch_seconds(dialect: str, column: Any) -> ColumnElement[int]:
    """`column` (a UTC time) as whole seconds since the Unix epoch, in the database's own SQL.
    Whole, so that a run started exactly on a slice's first instant falls in that slice: a
    fraction (SQLite's Julian day, a float) can land a hair below it, in the slice before."""
    if dialect == "postgresql":
        return cast(func.floor(func.extract("epoch", column)), BigInteger)
    return cast(func.strftime("%s", column), Integer)


def slice_of(seconds: ColumnElement[int], bucket_s: int) -> ColumnElement[int]:
    """The number of the slice a time falls in: seconds // bucket_s, integers both (times
    are past 1970, so the division's truncation is a floor)."""
    return seconds // bucket_s


def latency_bin() -> ColumnElement[int]:
    """The histogram bin of a run's latency (0 for under 250 ms, … the last for the rest)."""
    whens = [(RUNS.c.latency_ms < bound, n) for n, bound in enumerate(LATENCY_BINS_MS)]
    return case(*whens, else_=len(LATENCY_BINS_MS))


def tool_counts(dialect: str, usage: ColumnElement[Any]) -> Any:
    """The (key, value) rows of a `tool_usage` object (as text on PostgreSQL, whose `json`
    has no equality to group by)."""
    if dialect == "postgresql":
        return func.json_each_text(cast(usage, JSON)).table_valued("key", "value")
    return func.json_each(usage).table_valued("key", "value")


@dataclass
class Sums:
    """A slice's sums as the database gives them, per latency bin, added up."""

    runs: int = 0
    ended: int = 0
    succeeded: int = 0
    latency_ms: float = 0.0
    reliability: float = 0.0
    scored: int = 0  # the runs with a reliability score

    def add(self, row: Sequence[Any]) -> None:
        count, finished, completed, latency, reliability, scored = row
        self.runs += int(count)
        self.ended += int(finished or 0)
        self.succeeded += int(completed or 0)
        self.latency_ms += float(latency or 0)
        self.reliability += float(reliability or 0)
        self.scored += int(scored)

    def slice(self, start: datetime) -> Slice:
        return Slice(
            start=start,
            runs=self.runs,
            ended=self.ended,
            succeeded=self.succeeded,
            average_latency_ms=self.latency_ms / self.runs if self.runs else None,
            average_reliability=self.reliability / self.scored if self.scored else None,
        )


class RunSeries:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.dialect = engine.dialect.name

    async def series(
        self, start: datetime, end: datetime, bucket_s: int, match: Match | None = None
    ) -> Series:
        """The three queries run at once, each on a pooled connection: SQLite's reads run
        in a thread each (aiosqlite), PostgreSQL's in a server process each, so the answer
        takes about the longest of them rather than their sum."""
        match = match or Match()
        within = match.where(start, end)
        binned, used, troubled = await asyncio.gather(
            self._rows(self._binned(match.source, within, bucket_s)),
            self._rows(self._tools(match.source, within)),
            self._rows(self._errors(match.source, within)),
        )
        slices, latency = fold(binned, start, end, bucket_s)
        tools = sorted(
            ((str(name), int(calls or 0)) for name, calls in used if name is not None),
            key=lambda row: (-row[1], row[0]),
        )
        errors = [(str(r), m, int(n)) for r, m, n in troubled]
        return Series(bucket_s, slices, latency, tools, errors)

    async def _rows(self, query: Select[Any]) -> list[Any]:
        async with self.engine.connect() as db:
            return list(await db.execute(query))

    def _binned(
        self, source: FromClause, within: ColumnElement[bool], bucket_s: int
    ) -> Select[Any]:
        """Per (slice, latency bin): the runs, how many ended and succeeded, and the sums
        of their latencies and scores, with the number of scored runs."""
        seconds = epoch_seconds(self.dialect, RUNS.c.started_at)
        numbered = (
            select(
                slice_of(seconds, bucket_s).label("n"),
                latency_bin().label("bin"),
                RUNS.c.status,
                RUNS.c.latency_ms,
                RUNS.c.reliability,
            )
            .select_from(source)
            .where(within)
            .subquery()
        )
        return select(
            numbered.c.n,
            numbered.c.bin,
            func.count(),
            ended(numbered.c.status),
            succeeded(numbered.c.status),
            func.sum(numbered.c.latency_ms),
            func.sum(numbered.c.reliability),
            func.count(numbered.c.reliability),
        ).group_by(numbered.c.n, numbered.c.bin)

    def _tools(self, source: FromClause, within: ColumnElement[bool]) -> Select[Any]:
        """Calls per tool: the runs grouped by their `tool_usage`, then each distinct one's
        counts times its runs."""
        usage = RUNS.c.tool_usage
        value = cast(usage, Text) if self.dialect == "postgresql" else usage
        grouped = (
            select(value.label("usage"), func.count().label("runs"))
            .select_from(source)
            .where(within & usage.isnot(None))
            .group_by(value)
            .subquery()
        )
        counts = tool_counts(self.dialect, grouped.c.usage)
        calls = func.sum(cast(counts.c.value, Integer) * grouped.c.runs)
        return (
            select(counts.c.key, calls)
            .select_from(grouped.join(counts, true()))
            .group_by(counts.c.key)
        )

    def _errors(self, source: FromClause, within: ColumnElement[bool]) -> Select[Any]:
        message = func.substr(RUNS.c.error, 1, ERROR_TEXT)
        troubled = RUNS.c.status.in_(UNANSWERED)  # an answer cut at max_tokens is an answer
        inner = (
            select(RUNS.c.finish_reason.label("reason"), message.label("message"))
            .select_from(source)
            .where(within & troubled)
            .subquery()
        )
        runs = func.count().label("runs")
        return (
            select(inner.c.reason, inner.c.message, runs)
            .group_by(inner.c.reason, inner.c.message)
            .order_by(runs.desc(), inner.c.reason)
            .limit(TOP_ERRORS)
        )


def fold(
    rows: list[Any], start: datetime, end: datetime, bucket_s: int
) -> tuple[list[Slice], list[int]]:
    """The (slice, bin) rows as every slice of [start, end) (empty ones too) and the
    latency histogram."""
    sums: dict[int, Sums] = {}
    latency = [0] * (len(LATENCY_BINS_MS) + 1)
    for n, number, *row in rows:
        sums.setdefault(int(n), Sums()).add(row)
        latency[int(number)] += int(row[0])
    first, last = int(start.timestamp()) // bucket_s, -(-int(end.timestamp()) // bucket_s)
    slices = [
        sums.get(n, Sums()).slice(datetime.fromtimestamp(n * bucket_s, UTC))
        for n in range(first, max(last, first + 1))
    ]
    return slices, latency
