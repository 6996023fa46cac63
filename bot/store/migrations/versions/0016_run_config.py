"""Each run keeps what it ran with: `runs.config` (`bot.vocabulary.ran_with`), and its mode,
prompt hash and tool set hash beside it, which the window's index takes in, so the runs list
and the charts filter by them reading the index alone (0010). Runs recorded before keep
NULL: what they ran with was not kept.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BEFORE = ("started_at", "status", "latency_ms", "reliability", "finish_reason", "model",
          "trigger", "session_key")  # fmt: skip
KEPT = ("mode", "prompt_hash", "tools_hash")


def upgrade() -> None:
    op.add_column("runs", sa.Column("config", sa.JSON(none_as_null=True), nullable=True))
    for name in KEPT:
        op.add_column("runs", sa.Column(name, sa.String(length=16), nullable=True))
    op.drop_index("ix_runs_window", table_name="runs")
    op.create_index("ix_runs_window", "runs", [*BEFORE, *KEPT])


def downgrade() -> None:
    op.drop_index("ix_runs_window", table_name="runs")
    op.create_index("ix_runs_window", "runs", list(BEFORE))
    # in place on both (SQLite 3.35+), as the columns are in no index any more
    for name in ("config", *KEPT):
        op.execute(f"ALTER TABLE runs DROP COLUMN {name}")
