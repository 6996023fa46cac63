"""Reading runs' traces and their numbers back: one run's trace, and the runs of a window of
time with what they add up to. A trace is one row's JSON (see migration 0005), so reading one
is a single indexed lookup whatever its size.

A window can be narrowed (`Match`) by the run's outcome, platform, model and trigger, by a
piece of its session's title, by what it ran with and to runs chosen by id; the aggregates
are those of the runs the list shows, so a filtered list and its numbers always agree. The
charts' numbers over time are in `bot.store.series`, the runs grouped in
`bot.store.run_groups`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, FromClause, Table, case, func, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.outcome import NOT_ENDED, RunStatus
from bot.store.schema import RunRow, SessionRow
from bot.store.sealing import TraceSeal, opened
from bot.vocabulary.events import Trigger

RUNS: Table = RunRow.__table__  # type: ignore[assignment]
SESSIONS: Table = SessionRow.__table__  # type: ignore[assignment]
RUNS_AND_SESSIONS = RUNS.join(SESSIONS, RUNS.c.session_key == SESSIONS.c.key)
SUMMARY = ("id", "session_key", "trigger", "sender", "model", "status", "finish_reason",
           "iterations", "latency_ms", "first_text_ms", "reliability", "mode", "prompt_hash",
           "tools_hash")  # fmt: skip


@dataclass(frozen=True)
class Match:
    """What a run must be to be counted, besides starting in the window; None matches all
    but the lab's replays (`bot.lab`), which only `trigger="replay"` counts, so the
    deployment's own figures leave them out. `status` is the run's
    (`bot.store.outcome.RunStatus`); `text` is looked for in the session's title and key, in
    any case."""

    status: str | None = None
    platform: str | None = None
    model: str | None = None
    trigger: str | None = None
    text: str | None = None
    mode: str | None = None  # what it ran with (`bot.vocabulary.ran_with`): its mode,
    prompt: str | None = None  # its system prompt's hash,
    tools: str | None = None  # and its tool set's
    runs: tuple[str, ...] | None = None  # these runs alone, by id (a link to chosen runs)

    @property
    def source(self) -> FromClause:
        """What the runs are read from: the runs alone unless a session's platform or title
        is asked about. Every run has its session (a foreign key), so the join drops none,
        and without it a window's numbers are read from the runs' index alone."""
        return RUNS_AND_SESSIONS if self.platform is not None or self.text else RUNS

    def where(self, start: datetime, end: datetime) -> ColumnElement[bool]:
        """The condition on `RUNS_AND_SESSIONS` for runs that started in [start, end)."""
        condition: ColumnElement[bool] = (RUNS.c.started_at >= start) & (RUNS.c.started_at < end)
        for column, wanted in (
            (RUNS.c.status, self.status),
            (SESSIONS.c.platform, self.platform),
            (RUNS.c.model, self.model),
            (RUNS.c.trigger, self.trigger),
            (RUNS.c.mode, self.mode),
            (RUNS.c.prompt_hash, self.prompt),
            (RUNS.c.tools_hash, self.tools),
        ):
            if wanted is not None:
                condition &= column == wanted
        if self.trigger is None:  # the lab's replays are not the deployment's own runs
            condition &= RUNS.c.trigger != Trigger.REPLAY
        if self.runs is not None:
            condition &= RUNS.c.id.in_(self.runs)
        if self.text:
            needle = self.text.lower()
            condition &= or_(
                func.lower(SESSIONS.c.title).contains(needle, autoescape=True),
                func.lower(RUNS.c.session_key).contains(needle, autoescape=True),
            )
        return condition


def succeeded(status: ColumnElement[str]) -> ColumnElement[int]:
    """How many of the runs counted have `status` completed: the only success."""
    return func.sum(case((status == RunStatus.COMPLETED, 1), else_=0))


def ended(status: ColumnElement[str]) -> ColumnElement[int]:
    """How many of them ended one way or another: a success rate's whole. A run waiting for
    a decision, or one that had nothing to do, is neither a success nor a failure."""
    return func.sum(case((status.notin_(NOT_ENDED), 1), else_=0))


def rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def number(value: Any) -> float | None:
    """An average as the database gives it (a Decimal on PostgreSQL), None for no rows."""
    return None if value is None else float(value)


# Where the runs' time went, averaged over those that counted it (`bot.trace.states`): each
# state's column, and `other`, the rest of the run's latency.
TIME_SPENT: dict[str, ColumnElement[Any]] = {
    "calling": RUNS.c.calling_ms,
    "streaming": RUNS.c.streaming_ms,
    "tools": RUNS.c.tools_ms,
    "person": RUNS.c.person_ms,
    "other": RUNS.c.latency_ms - RUNS.c.calling_ms - RUNS.c.streaming_ms - RUNS.c.tools_ms,
}


@dataclass(frozen=True)
class Window:
    """The runs that started in [start, end), newest first, and their aggregates: `total`
    runs, of which `ended` ended and `succeeded` completed."""

    total: int
    ended: int
    succeeded: int
    average_latency_ms: float | None
    average_reliability: float | None
    runs: list[dict[str, Any]]
    average_iterations: float | None = None
    max_iterations: int | None = None
    average_states_ms: dict[str, float | None] = field(default_factory=dict)  # `TIME_SPENT`

    @property
    def success_rate(self) -> float | None:
        return rate(self.succeeded, self.ended)


@dataclass(frozen=True)
class Facets:
    """The values the runs of a window have, to offer as filters."""

    platforms: list[str]
    models: list[str]
    triggers: list[str]
    statuses: list[str]
    modes: list[str]  # what the runs ran with (NULL for those recorded before it was kept)
    prompts: list[str]
    tool_sets: list[str]


def summary(row: Any) -> dict[str, Any]:
    shown = {name: getattr(row, name) for name in SUMMARY}
    shown["session"] = shown.pop("session_key")
    shown["title"] = row.title
    shown["platform"] = row.platform
    shown["started_at"] = row.started_at.astimezone(UTC).isoformat()
    shown["finished_at"] = row.finished_at.astimezone(UTC).isoformat()
    shown["tokens"] = {"input": row.input_tokens, "output": row.output_tokens}
    return shown


SHOWN = (
    *(RUNS.c[name] for name in SUMMARY),
    SESSIONS.c.title,
    SESSIONS.c.platform,
    RUNS.c.started_at,
    RUNS.c.finished_at,
    RUNS.c.input_tokens,
    RUNS.c.output_tokens,
)


@dataclass(frozen=True)
class Traced:
    """A run as `GET /api/traces/{id}` shows it."""

    run: dict[str, Any]
    trace: dict[str, Any] | None
    config: dict[str, Any] | None  # `bot.vocabulary.ran_with.RanWith`, as JSON


class Traces:
    def __init__(self, engine: AsyncEngine, seal: TraceSeal | None = None) -> None:
        self.engine = engine
        self.seal = seal  # opens the traces sealed at rest (`bot.store.sealing`)

    async def of_run(self, run_id: str) -> Traced | None:
        """The run's summary, its trace and what it ran with (None for a run recorded
        before they were kept); None for no such run. `Unsealable` for a sealed trace no key
        of this process opens."""
        query = select(*SHOWN, RUNS.c.trace, RUNS.c.config).select_from(RUNS_AND_SESSIONS)
        async with self.engine.connect() as db:
            row = (await db.execute(query.where(RUNS.c.id == run_id))).first()
        if row is None:
            return None
        return Traced(summary(row), opened(row.trace, self.seal), row.config)

    async def span(self, run_ids: tuple[str, ...]) -> tuple[datetime, datetime] | None:
        """When the first of these runs started and the last one did, each found by its
        primary key; None when none of them is recorded."""
        query = select(func.min(RUNS.c.started_at), func.max(RUNS.c.started_at))
        async with self.engine.connect() as db:
            first, last = (await db.execute(query.where(RUNS.c.id.in_(run_ids)))).one()
        return None if first is None or last is None else (first, last)

    async def window(
        self, start: datetime, end: datetime, offset: int, limit: int, match: Match | None = None
    ) -> Window:
        match = match or Match()
        within = match.where(start, end)
        totals = (
            select(
                func.count(),
                ended(RUNS.c.status),
                succeeded(RUNS.c.status),
                func.avg(RUNS.c.latency_ms),
                func.avg(RUNS.c.reliability),
                func.avg(RUNS.c.iterations),
                func.max(RUNS.c.iterations),
                *(func.avg(spent) for spent in TIME_SPENT.values()),
            )
            .select_from(match.source)
            .where(within)
        )
        page = (
            select(*SHOWN)
            .select_from(RUNS_AND_SESSIONS)
            .where(within)
            .order_by(RUNS.c.started_at.desc(), RUNS.c.id)
            .offset(offset)
            .limit(limit)
        )
        async with self.engine.connect() as db:
            count, finished, completed, latency, reliability, *rest = (
                await db.execute(totals)
            ).one()
            rows = (await db.execute(page)).all()
        iterations, most, *spent = rest
        return Window(
            total=int(count),
            ended=int(finished or 0),
            succeeded=int(completed or 0),
            average_latency_ms=number(latency),
            average_reliability=number(reliability),
            runs=[summary(row) for row in rows],
            average_iterations=number(iterations),
            max_iterations=None if most is None else int(most),
            average_states_ms=dict(zip(TIME_SPENT, map(number, spent), strict=True)),
        )

    async def facets(self, start: datetime, end: datetime) -> Facets:
        """Each platform, model, trigger, status, mode, prompt and tool set some run of
        [start, end) has, sorted; all read at once, each on a pooled connection (on
        PostgreSQL each is a scan of the window's rows, so the answer takes about one scan's
        time, not seven)."""
        within = Match().where(start, end)

        async def values(column: ColumnElement[Any]) -> list[str]:
            source = RUNS_AND_SESSIONS if column.table is SESSIONS else RUNS
            query = select(column).distinct().select_from(source).where(within)
            async with self.engine.connect() as db:
                found = (await db.execute(query.where(column.isnot(None)))).scalars()
                return sorted(str(value) for value in found)

        columns = (
            SESSIONS.c.platform, RUNS.c.model, RUNS.c.trigger, RUNS.c.status, RUNS.c.mode,
            RUNS.c.prompt_hash, RUNS.c.tools_hash,
        )  # fmt: skip
        return Facets(*await asyncio.gather(*(values(column) for column in columns)))
