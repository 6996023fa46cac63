"""What the admins of a chat chose for everyone in it: `chat_settings` (a chat's or a
topic's standing instruction, and whether the bot answers every message there) and
`chat_tools_off` (the tools switched off in a chat).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chat_settings",
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("instruction", sa.Text(), nullable=True),
        sa.Column("activation", sa.String(length=16), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_chat_settings")),
    )
    op.create_table(
        "chat_tools_off",
        sa.Column("chat", sa.String(length=300), nullable=False),
        sa.Column("tool", sa.String(length=200), nullable=False),
        sa.Column("switched_by", sa.String(length=200), nullable=False),
        sa.Column("switched_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("chat", "tool", name=op.f("pk_chat_tools_off")),
    )


def downgrade() -> None:
    op.drop_table("chat_tools_off")
    op.drop_table("chat_settings")
