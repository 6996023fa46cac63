"""The windows of runs read from indexes alone again, and more of them: `ix_runs_window`
takes each run's tokens and cost (the runs grouped by what they ran with add them up), and
on SQLite `ix_runs_outcomes` takes the trigger (the lab's replays are left out of the tools'
and errors' charts by it).

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-07
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WINDOW = ("started_at", "status", "latency_ms", "reliability", "finish_reason", "model",
          "trigger", "session_key", "mode", "prompt_hash", "tools_hash")  # fmt: skip
TOKENS = ("input_tokens", "output_tokens", "cost_usd")
OUTCOMES = ("started_at", "status", "finish_reason", "error", "tool_usage")


def _window(columns: Sequence[str]) -> None:
    op.drop_index("ix_runs_window", table_name="runs")
    op.create_index("ix_runs_window", "runs", list(columns))


def _outcomes(columns: Sequence[str]) -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.drop_index("ix_runs_outcomes", table_name="runs")
        op.create_index("ix_runs_outcomes", "runs", list(columns))


def upgrade() -> None:
    _window([*WINDOW, *TOKENS])
    _outcomes([*OUTCOMES, "trigger"])


def downgrade() -> None:
    _outcomes(OUTCOMES)
    _window(WINDOW)
