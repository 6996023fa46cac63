"""Evaluations in SQL (`bot.lab`): what was asked, which runs were replayed as which, and the
two records of each, side by side.

A replay's run id is known before it runs (`bot.vocabulary.runs.run_id` of its lane and
envelope), so a row joins the recorded run and its replay in the `runs` table once the
replay is recorded; until then the replay is running, unless it was skipped (`skipped`: the
evaluation was cancelled or over its budget, or the run is gone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Table, and_, func, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.history import MESSAGES, RUNS
from bot.store.schema import EvaluationRow, EvaluationRunRow
from bot.vocabulary.replays import LANES

EVALUATIONS: Table = EvaluationRow.__table__  # type: ignore[assignment]
EVALUATION_RUNS: Table = EvaluationRunRow.__table__  # type: ignore[assignment]
SIDE = ("status", "reliability", "latency_ms", "input_tokens", "output_tokens", "cost_usd",
        "iterations")  # fmt: skip


@dataclass(frozen=True)
class Evaluation:
    id: str
    label: str
    config: dict[str, Any]
    lanes: int
    budget: int | None
    status: str
    created_by: str
    created_at: datetime


@dataclass(frozen=True)
class Planned:
    """A run to replay: where it is in the evaluation, and the replay's run id."""

    position: int
    run_id: str
    replay_run: str
    skipped: str | None = None  # why it is not replayed at all


@dataclass(frozen=True)
class Compared:
    """A row: the recorded run and its replay, as the record holds them (None: not yet, or
    not at all), with each one's final answer."""

    run_id: str
    replay_run: str
    skipped: str | None
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    answers: tuple[str | None, str | None]


class Evaluations:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def add(self, evaluation: Evaluation, planned: Sequence[Planned]) -> None:
        async with self.engine.begin() as db:
            await db.execute(EVALUATIONS.insert().values(**evaluation.__dict__))
            if planned:
                await db.execute(
                    EVALUATION_RUNS.insert(),
                    [{"evaluation_id": evaluation.id, **p.__dict__} for p in planned],
                )

    async def get(self, evaluation_id: str) -> Evaluation | None:
        chosen = select(EVALUATIONS).where(EVALUATIONS.c.id == evaluation_id)
        async with self.engine.connect() as db:
            row = (await db.execute(chosen)).first()
        return None if row is None else _evaluation(row)

    async def page(self, offset: int, limit: int) -> tuple[int, list[Evaluation]]:
        newest = (
            select(EVALUATIONS)
            .order_by(EVALUATIONS.c.created_at.desc(), EVALUATIONS.c.id)
            .offset(offset)
            .limit(limit)
        )
        async with self.engine.connect() as db:
            total = int(
                (await db.execute(select(func.count()).select_from(EVALUATIONS))).scalar_one()
            )
            return total, [_evaluation(row) for row in await db.execute(newest)]

    async def unfinished(self, evaluation_ids: Sequence[str]) -> set[str]:
        """Those of `evaluation_ids` with a replay neither recorded nor skipped yet."""
        if not evaluation_ids:
            return set()
        waiting = (
            select(EVALUATION_RUNS.c.evaluation_id)
            .select_from(EVALUATION_RUNS.outerjoin(RUNS, RUNS.c.id == EVALUATION_RUNS.c.replay_run))
            .where(
                EVALUATION_RUNS.c.evaluation_id.in_(evaluation_ids),
                EVALUATION_RUNS.c.skipped.is_(None),
                RUNS.c.id.is_(None),
            )
            .distinct()
        )
        async with self.engine.connect() as db:
            return {row.evaluation_id for row in await db.execute(waiting)}

    async def cancel(self, evaluation_id: str) -> bool:
        """Cancel it: replays not begun yet are skipped; False if there is no such one."""
        async with self.engine.begin() as db:
            changed = await db.execute(
                update(EVALUATIONS)
                .where(EVALUATIONS.c.id == evaluation_id)
                .values(status="cancelled")
            )
            return bool(changed.rowcount)

    async def skip(self, evaluation_id: str, replay_run: str, why: str) -> None:
        async with self.engine.begin() as db:
            await db.execute(
                update(EVALUATION_RUNS)
                .where(
                    EVALUATION_RUNS.c.evaluation_id == evaluation_id,
                    EVALUATION_RUNS.c.replay_run == replay_run,
                )
                .values(skipped=why[:200])
            )

    async def spent(self, evaluation_id: str) -> int:
        """The tokens its replays took so far."""
        lanes = RUNS.c.session_key.startswith(f"{LANES}{evaluation_id}:", autoescape=True)
        total = select(func.coalesce(func.sum(RUNS.c.input_tokens + RUNS.c.output_tokens), 0))
        async with self.engine.connect() as db:
            return int((await db.execute(total.where(lanes))).scalar_one())

    async def compared(self, evaluation_id: str) -> list[Compared]:
        """Its rows in order, each recorded run beside its replay."""
        before, after = RUNS.alias("before"), RUNS.alias("after")
        query = (
            select(
                EVALUATION_RUNS.c.run_id,
                EVALUATION_RUNS.c.replay_run,
                EVALUATION_RUNS.c.skipped,
                *(before.c[name].label(f"b_{name}") for name in SIDE),
                *(after.c[name].label(f"a_{name}") for name in SIDE),
                before.c.id.label("b_id"),
                after.c.id.label("a_id"),
            )
            .select_from(
                EVALUATION_RUNS.outerjoin(
                    before, before.c.id == EVALUATION_RUNS.c.run_id
                ).outerjoin(after, after.c.id == EVALUATION_RUNS.c.replay_run)
            )
            .where(EVALUATION_RUNS.c.evaluation_id == evaluation_id)
            .order_by(EVALUATION_RUNS.c.position)
        )
        async with self.engine.connect() as db:
            rows = (await db.execute(query)).all()
            ids = [row.run_id for row in rows] + [row.replay_run for row in rows]
            answers = await _answers(db, ids)
        return [
            Compared(
                row.run_id, row.replay_run, row.skipped,
                _side(row, "b") if row.b_id is not None else None,
                _side(row, "a") if row.a_id is not None else None,
                (answers.get(row.run_id), answers.get(row.replay_run)),
            )
            for row in rows
        ]  # fmt: skip


async def _answers(db: Any, run_ids: Sequence[str]) -> dict[str, str]:
    """Each run's final answer: its last assistant message's text."""
    last = (
        select(MESSAGES.c.run_id, func.max(MESSAGES.c.seq).label("seq"))
        .where(
            MESSAGES.c.run_id.in_(run_ids), MESSAGES.c.role == "assistant", MESSAGES.c.text != ""
        )
        .group_by(MESSAGES.c.run_id)
        .subquery()
    )
    query = select(MESSAGES.c.run_id, MESSAGES.c.text).select_from(
        MESSAGES.join(last, and_(MESSAGES.c.seq == last.c.seq))
    )
    return {row.run_id: row.text for row in await db.execute(query)}


def _side(row: Any, side: str) -> dict[str, Any]:
    values = {name: getattr(row, f"{side}_{name}") for name in SIDE}
    return {
        "outcome": values["status"],
        "score": values["reliability"],
        "latency_ms": values["latency_ms"],
        "tokens": values["input_tokens"] + values["output_tokens"],
        "cost": values["cost_usd"],
        "steps": values["iterations"],
    }


def _evaluation(row: Any) -> Evaluation:
    return Evaluation(
        row.id, row.label, row.config, row.lanes, row.budget, row.status, row.created_by,
        row.created_at.astimezone(UTC),
    )  # fmt: skip
