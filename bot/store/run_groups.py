"""The runs of a window side by side by what they ran on or with: grouped by the model that
answered, the mode, the system prompt's hash or the tool set's, each group with its runs, how
many ended and succeeded, their average latency and score, and the tokens and estimated cost
they spent. An operator compares a prompt or a tool set with the one before it this way.

One statement, added up by the database, so a window of a hundred thousand runs costs the web
process a row per group. The groups with most runs come first, at most `limit` of them (a
prompt's hash changes with each person's standing instruction, so a window may hold many),
with how many there are in all. The filters are the runs list's (`Match`), so a group's figures
equal those of the list filtered by its key.

The counts, averages and filters are in the window's index (`schema.WINDOW_INDEX`); the tokens
and the cost are not, so this statement reads the rows of the window's runs for them: on
SQLite their first part (the trace after them spills over to pages of its own, not read), on
PostgreSQL rows whose trace is stored apart (TOAST).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.traces import RUNS, Match, ended, rate, succeeded

# What runs are grouped by: the model that answered, and what they ran with
# (`bot.vocabulary.ran_with`), NULL for runs recorded before that was kept.
GROUPINGS: dict[str, ColumnElement[Any]] = {
    "model": RUNS.c.model,
    "mode": RUNS.c.mode,
    "prompt": RUNS.c.prompt_hash,
    "tools": RUNS.c.tools_hash,
}
MAX_GROUPS = 200


@dataclass(frozen=True)
class Group:
    """The runs of a window that share `key` (None: recorded without it)."""

    key: str | None
    runs: int
    ended: int  # of `runs`, those that ended (not waiting for a decision, not skipped)
    succeeded: int
    average_latency_ms: float | None
    average_reliability: float | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # the estimates' sum over the runs that had a price; None if none had

    @property
    def success_rate(self) -> float | None:
        return rate(self.succeeded, self.ended)


@dataclass(frozen=True)
class Groups:
    """The `limit` groups with most runs (ties by key, the runs without one last), and how
    many groups the window's runs make in all."""

    by: str
    total: int
    groups: list[Group]


def group_of(row: Any) -> Group:
    key, runs, finished, completed, latency, reliability, tokens_in, tokens_out, cost, _ = row
    return Group(
        key=None if key is None else str(key),
        runs=int(runs),
        ended=int(finished or 0),
        succeeded=int(completed or 0),
        average_latency_ms=None if latency is None else float(latency),
        average_reliability=None if reliability is None else float(reliability),
        input_tokens=int(tokens_in or 0),
        output_tokens=int(tokens_out or 0),
        cost_usd=None if cost is None else float(cost),
    )


class RunGroups:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def groups(
        self,
        start: datetime,
        end: datetime,
        by: str,
        match: Match | None = None,
        limit: int = MAX_GROUPS,
    ) -> Groups:
        """The runs that started in [start, end) and match, grouped by `by` (a key of
        GROUPINGS); the number of groups is counted over the grouped rows before the limit."""
        match = match or Match()
        key = GROUPINGS[by]
        runs = func.count()
        query = (
            select(
                key,
                runs,
                ended(RUNS.c.status),
                succeeded(RUNS.c.status),
                func.avg(RUNS.c.latency_ms),
                func.avg(RUNS.c.reliability),
                func.sum(RUNS.c.input_tokens),
                func.sum(RUNS.c.output_tokens),
                func.sum(RUNS.c.cost_usd),
                func.count().over(),
            )
            .select_from(match.source)
            .where(match.where(start, end))
            .group_by(key)
            .order_by(runs.desc(), case((key.is_(None), 1), else_=0), key)
            .limit(limit)
        )
        async with self.engine.connect() as db:
            rows = list(await db.execute(query))
        total = int(rows[0][-1]) if rows else 0
        return Groups(by, total, [group_of(row) for row in rows])
