"""Long-term memories, with full-text search on both databases.

Both index `folded`, the text as Python folds it (case and accents, `bot.store.memory.fold`),
which queries are folded with too: the databases' own folding differs (PostgreSQL's depends
on its locale, and lowers only ASCII under C). SQLite: an external-content FTS5 table over
`memories.folded`, kept in step by triggers. PostgreSQL: a generated `tsvector` column with a
GIN index. Both tokenise language-neutrally (no stemming, no stop words): people write in
any language.

A later migration that alters `memories` on SQLite (batch mode copies the table) must make
the triggers again.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

SQLITE_UP = (
    "CREATE VIRTUAL TABLE memories_fts USING fts5(folded, content='memories', "
    "content_rowid='id', tokenize='unicode61 remove_diacritics 0')",
    "CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN "
    "INSERT INTO memories_fts(rowid, folded) VALUES (new.id, new.folded); END",
    "CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN "
    "INSERT INTO memories_fts(memories_fts, rowid, folded) VALUES ('delete', old.id, old.folded); "
    "END",
    "CREATE TRIGGER memories_fts_update AFTER UPDATE ON memories BEGIN "
    "INSERT INTO memories_fts(memories_fts, rowid, folded) VALUES ('delete', old.id, old.folded); "
    "INSERT INTO memories_fts(rowid, folded) VALUES (new.id, new.folded); END",
)
SQLITE_DOWN = (
    "DROP TRIGGER IF EXISTS memories_fts_update",
    "DROP TRIGGER IF EXISTS memories_fts_delete",
    "DROP TRIGGER IF EXISTS memories_fts_insert",
    "DROP TABLE IF EXISTS memories_fts",
)
POSTGRES_UP = (
    "ALTER TABLE memories ADD COLUMN search tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple', folded)) STORED",
    "CREATE INDEX ix_memories_search ON memories USING GIN (search)",
)


def upgrade() -> None:
    op.create_table(
        "memories",
        sa.Column("id", ROW_ID, primary_key=True, autoincrement=True),
        sa.Column("scope", sa.String(200), nullable=False),
        sa.Column("text", sa.String(500), nullable=False),
        sa.Column("folded", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("scope", "text", name="uq_memories_scope"),
    )
    dialect = op.get_bind().dialect.name
    for statement in SQLITE_UP if dialect == "sqlite" else POSTGRES_UP:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for statement in SQLITE_DOWN:
            op.execute(statement)
    op.drop_table("memories")
