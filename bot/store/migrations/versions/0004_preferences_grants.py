"""What people prefer (language, model, a standing instruction), and the tools a person
allowed for good in a chat ("Always allow").

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("people") as people:
        people.add_column(sa.Column("language", sa.String(64), nullable=True))
        people.add_column(sa.Column("model", sa.String(200), nullable=True))
        people.add_column(sa.Column("instruction", sa.String(500), nullable=True))
    op.create_table(
        "grants",
        sa.Column("id", ROW_ID, primary_key=True, autoincrement=True),
        sa.Column("person", sa.String(200), nullable=False),
        sa.Column("chat", sa.String(300), nullable=False),
        sa.Column("tool", sa.String(200), nullable=False),
        sa.Column("granted_by", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("person", "chat", "tool"),
    )
    op.create_index("ix_grants_chat", "grants", ["chat"])


def downgrade() -> None:
    op.drop_index("ix_grants_chat", table_name="grants")
    op.drop_table("grants")
    with op.batch_alter_table("people") as people:
        people.drop_column("instruction")
        people.drop_column("model")
        people.drop_column("language")
