"""Runs that ended without their answer get the status that says how, and the score that
follows from it.

Until now a run that hit its step cap, looped, was stopped or timed out was recorded as
`completed`, and one given up after crashing workers as `skipped`, so success rates counted
them as successes. Each now has its own status (`bot.store.outcome`); the finish reason is
kept as it was. Their reliability loses the 50 points a run without its answer loses
(`bot.trace.metrics`), in the column and in the trace's numbers: the score is clamped at 0
from a sum whose other terms are unchanged, so the new score is the old one less 50, at least 0.

The statuses and the penalty are written out here as they were when this ran, not imported,
so the migration means the same whatever the code becomes.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# finish reason: (status before, status now)
MOVED = {
    "cancelled": ("completed", "stopped"),
    "timed_out": ("completed", "timed_out"),
    "max_iterations": ("completed", "step_limit"),
    "doom_loop": ("completed", "looped"),
    "poisoned": ("skipped", "given_up"),
    "nothing_pending": ("completed", "skipped"),
}
UNANSWERED = ("failed", "stopped", "timed_out", "step_limit", "looped", "given_up")
PENALTY = 50
PAGE = 500

runs = sa.table(
    "runs",
    sa.column("id", sa.String),
    sa.column("status", sa.String),
    sa.column("finish_reason", sa.String),
    sa.column("reliability", sa.Integer),
    sa.column("trace", sa.JSON),
)


def upgrade() -> None:
    bind = op.get_bind()
    for reason, (before, now) in MOVED.items():
        bind.execute(
            runs.update()
            .where((runs.c.finish_reason == reason) & (runs.c.status == before))
            .values(status=now)
        )
    _rescore(bind)


def _rescore(bind: sa.Connection) -> None:
    """Take the penalty off every unanswered run's score, a page of rows at a time."""
    after = ""
    scored = (runs.c.status.in_(UNANSWERED)) & runs.c.reliability.isnot(None)
    while True:
        page = bind.execute(
            sa.select(runs.c.id, runs.c.reliability, runs.c.trace)
            .where(scored & (runs.c.id > after))
            .order_by(runs.c.id)
            .limit(PAGE)
        ).all()
        for row in page:
            score = max(0, row.reliability - PENALTY)
            bind.execute(
                runs.update()
                .where(runs.c.id == row.id)
                .values(reliability=score, trace=_with_score(row.trace, score))
            )
        if len(page) < PAGE:
            return
        after = page[-1].id


def _with_score(trace: Any, score: int) -> Any:
    if isinstance(trace, dict) and isinstance(trace.get("metrics"), dict):
        return {**trace, "metrics": {**trace["metrics"], "reliability": score}}
    return trace


def downgrade() -> None:
    """The statuses as they were; the scores stay, since a clamped score cannot be undone."""
    bind = op.get_bind()
    for reason, (before, now) in MOVED.items():
        bind.execute(
            runs.update()
            .where((runs.c.finish_reason == reason) & (runs.c.status == now))
            .values(status=before)
        )
