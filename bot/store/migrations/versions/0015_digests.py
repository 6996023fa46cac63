"""Daily digests: a memory may tell of a day, written from the sessions it names; scopes
whose days are not digested

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.add_column("memories", sa.Column("day", sa.Date(), nullable=True))
    op.create_index("ix_memories_scope_day", "memories", ["scope", "day"], unique=True)
    op.create_table(
        "digest_sources",
        sa.Column("memory_id", ROW_ID, nullable=False),
        sa.Column("session_key", sa.String(length=300), nullable=False),
        sa.ForeignKeyConstraint(
            ["memory_id"],
            ["memories.id"],
            name=op.f("fk_digest_sources_memory_id_memories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("memory_id", "session_key", name=op.f("pk_digest_sources")),
    )
    op.create_index(
        op.f("ix_digest_sources_session_key"), "digest_sources", ["session_key"], unique=False
    )
    op.create_table(
        "digests_off",
        sa.Column("scope", sa.String(length=200), nullable=False),
        sa.Column("by", sa.String(length=200), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("scope", name=op.f("pk_digests_off")),
    )


def downgrade() -> None:
    op.drop_table("digests_off")
    op.drop_index(op.f("ix_digest_sources_session_key"), table_name="digest_sources")
    op.drop_table("digest_sources")
    op.drop_index("ix_memories_scope_day", table_name="memories")
    # in place on both (SQLite 3.35+): batch mode would copy the table and lose the full-text
    # index's triggers (0003)
    op.execute("ALTER TABLE memories DROP COLUMN day")
