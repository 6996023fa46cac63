"""Windows of runs read from indexes alone: the dashboard's counts, averages, filters and
charts over a hundred thousand runs no longer read each run's row (and its trace).

- `runs.tool_usage`: the trace's `metrics.tool_usage` kept beside it, filled here for the runs
  recorded before, so the tools chart reads a few bytes a run instead of parsing its trace;
- `ix_runs_window` (started_at and the columns the windows read) replaces `ix_runs_started`,
  which it begins with;
- on SQLite, `ix_runs_outcomes` (started_at, status, finish reason, error and tool usage) for
  the tools' and errors' charts: texts without a bound, which PostgreSQL keeps out of index
  keys; there the row holds them and its trace is stored apart (TOAST).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WINDOW = ("started_at", "status", "latency_ms", "reliability", "finish_reason", "model",
          "trigger", "session_key")  # fmt: skip
OUTCOMES = ("started_at", "status", "finish_reason", "error", "tool_usage")


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    op.add_column("runs", sa.Column("tool_usage", sa.JSON(), nullable=True))
    usage = (
        "json_extract(trace, '$.metrics.tool_usage')"
        if sqlite
        else "trace -> 'metrics' -> 'tool_usage'"
    )
    op.execute(f"UPDATE runs SET tool_usage = {usage} WHERE trace IS NOT NULL")
    op.create_index("ix_runs_window", "runs", list(WINDOW))
    op.drop_index("ix_runs_started", table_name="runs")
    if sqlite:
        op.create_index("ix_runs_outcomes", "runs", list(OUTCOMES))


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.drop_index("ix_runs_outcomes", table_name="runs")
    op.create_index("ix_runs_started", "runs", ["started_at"])
    op.drop_index("ix_runs_window", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("tool_usage")
