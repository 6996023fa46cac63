"""Each run keeps where its time went: the milliseconds it spent calling the model, streaming
its text, running tools and (for a run a decision resumed) waiting for the person
(`bot.trace.states`), beside its iterations in the window's index, so the runs list adds
them up reading the index alone. Runs recorded before keep NULL: their traces did not count
it.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BEFORE = ("started_at", "status", "latency_ms", "reliability", "finish_reason", "model",
          "trigger", "session_key", "mode", "prompt_hash", "tools_hash", "input_tokens",
          "output_tokens", "cost_usd")  # fmt: skip
STATES = ("calling_ms", "streaming_ms", "tools_ms", "person_ms")


def upgrade() -> None:
    for name in STATES:
        op.add_column("runs", sa.Column(name, sa.Integer(), nullable=True))
    op.drop_index("ix_runs_window", table_name="runs")
    op.create_index("ix_runs_window", "runs", [*BEFORE, "iterations", *STATES])


def downgrade() -> None:
    op.drop_index("ix_runs_window", table_name="runs")
    op.create_index("ix_runs_window", "runs", list(BEFORE))
    # in place on both (SQLite 3.35+), as the columns are in no index any more
    for name in STATES:
        op.execute(f"ALTER TABLE runs DROP COLUMN {name}")
