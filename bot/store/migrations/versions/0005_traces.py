"""A run's trace (its steps, their links and times, and its numbers) and its reliability
score, kept with the run: one row read gives the whole trace.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("runs") as runs:
        runs.add_column(sa.Column("trace", sa.JSON(), nullable=True))
        runs.add_column(sa.Column("reliability", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as runs:
        runs.drop_column("reliability")
        runs.drop_column("trace")
