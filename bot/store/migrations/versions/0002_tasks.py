"""Scheduled tasks, and what people choose for themselves (their time zone).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _when(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "people",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("timezone", sa.String(64), nullable=True),
        _when("updated_at"),
    )
    op.create_table(
        "tasks",
        sa.Column("id", ROW_ID, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(100), nullable=True, unique=True),
        sa.Column("session_key", sa.String(300), nullable=False),
        sa.Column("platform", sa.String(32), nullable=False),
        sa.Column("chat_kind", sa.String(32), nullable=False),
        sa.Column("reply_to", sa.JSON(), nullable=False),
        sa.Column("creator", sa.String(200), nullable=False),
        sa.Column("creator_name", sa.String(200), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("when", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("spec", sa.String(200), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        _when("anchor"),
        sa.Column("if_missed", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        _when("next_run_at", nullable=True),
        _when("last_run_at", nullable=True),
        sa.Column("runs", sa.Integer(), nullable=False),
        sa.Column("missed", sa.Integer(), nullable=False),
        sa.Column("ended_by", sa.String(200), nullable=True),
        _when("created_at"),
        _when("updated_at"),
    )
    op.create_index("ix_tasks_session_key", "tasks", ["session_key"])
    op.create_index("ix_tasks_creator", "tasks", ["creator"])
    op.create_index("ix_tasks_status_next", "tasks", ["status", "next_run_at"])


def downgrade() -> None:
    op.drop_table("tasks")
    op.drop_table("people")
