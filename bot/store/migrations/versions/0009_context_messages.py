"""The older part of a long session's context, moved out of Redis (`bot.session.states`).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "context_messages",
        sa.Column("session_key", sa.String(300), nullable=False),
        sa.Column("epoch", sa.String(32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("fence", sa.BigInteger(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("session_key", "epoch", "position", name="pk_context_messages"),
    )


def downgrade() -> None:
    op.drop_table("context_messages")
