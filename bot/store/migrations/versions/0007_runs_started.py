"""Runs by their start alone: the dashboard's and `/api/metrics/*`'s windows of time, across
every session, read the runs that started within them without scanning the table.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_runs_started", "runs", ["started_at"])


def downgrade() -> None:
    op.drop_index("ix_runs_started", table_name="runs")
