"""Reading runs' traces and their numbers back: one run's trace, and the runs of a window of
time with what they add up to. A trace is one row's JSON (see migration 0005), so reading one
is a single indexed lookup whatever its size."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Table, case, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.schema import RunRow

RUNS: Table = RunRow.__table__  # type: ignore[assignment]
SUMMARY = ("id", "session_key", "trigger", "sender", "model", "status", "finish_reason",
           "iterations", "latency_ms", "first_text_ms", "reliability")  # fmt: skip


@dataclass(frozen=True)
class Window:
    """The runs that started in [start, end), newest first, and their aggregates."""

    total: int
    succeeded: int
    average_latency_ms: float | None
    average_reliability: float | None
    runs: list[dict[str, Any]]

    @property
    def success_rate(self) -> float | None:
        return self.succeeded / self.total if self.total else None


def summary(row: Any) -> dict[str, Any]:
    shown = {name: getattr(row, name) for name in SUMMARY}
    shown["session"] = shown.pop("session_key")
    shown["started_at"] = row.started_at.astimezone(UTC).isoformat()
    shown["finished_at"] = row.finished_at.astimezone(UTC).isoformat()
    shown["tokens"] = {"input": row.input_tokens, "output": row.output_tokens}
    return shown


class Traces:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def of_run(self, run_id: str) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
        """The run's summary and its trace (None for a run recorded before traces were);
        None for no such run."""
        async with self.engine.connect() as db:
            row = (await db.execute(select(RUNS).where(RUNS.c.id == run_id))).first()
        return None if row is None else (summary(row), row.trace)

    async def window(self, start: datetime, end: datetime, offset: int, limit: int) -> Window:
        within = (RUNS.c.started_at >= start) & (RUNS.c.started_at < end)
        totals = select(
            func.count(),
            func.sum(case((RUNS.c.status == "completed", 1), else_=0)),
            func.avg(RUNS.c.latency_ms),
            func.avg(RUNS.c.reliability),
        ).where(within)
        page = (
            select(*(RUNS.c[name] for name in SUMMARY), RUNS.c.started_at, RUNS.c.finished_at,
                   RUNS.c.input_tokens, RUNS.c.output_tokens)
            .where(within)
            .order_by(RUNS.c.started_at.desc(), RUNS.c.id)
            .offset(offset)
            .limit(limit)
        )  # fmt: skip
        async with self.engine.connect() as db:
            count, succeeded, latency, reliability = (await db.execute(totals)).one()
            rows = (await db.execute(page)).all()
        return Window(
            total=int(count),
            succeeded=int(succeeded or 0),
            average_latency_ms=None if latency is None else float(latency),
            average_reliability=None if reliability is None else float(reliability),
            runs=[summary(row) for row in rows],
        )
