"""The files each recorded message carries, by hash, so a deleted session's files can go.

`message_files` (message id, SHA-256) is filled here from the messages recorded before: their
image and document blocks, and the text taken out of a PDF.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

import json
from collections.abc import Iterator, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    files = op.create_table(
        "message_files",
        sa.Column("message_id", sa.String(length=32), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("message_id", "sha256"),
    )
    op.create_index("ix_message_files_sha256", "message_files", ["sha256"])
    bind = op.get_bind()
    found = bind.execute(
        sa.text("SELECT id, content FROM messages WHERE CAST(content AS TEXT) LIKE :mark"),
        {"mark": '%"sha256"%'},
    )
    rows = [
        {"message_id": id_, "sha256": sha} for id_, content in found for sha in _hashes(content)
    ]
    if rows:
        op.bulk_insert(files, rows)


def downgrade() -> None:
    op.drop_index("ix_message_files_sha256", table_name="message_files")
    op.drop_table("message_files")


def _hashes(content: Any) -> Iterator[str]:
    """The hashes of the files a message's blocks refer to: an image's or a document's
    (`file`), and those a tool sent (a result's `files`)."""
    blocks = json.loads(content) if isinstance(content, str) else content
    seen: set[str] = set()
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, dict):
            continue
        refs = [block.get("file"), *(block.get("files") or [])]
        for ref in refs:
            for sha in (ref or {}).get("sha256"), (ref or {}).get("extract"):
                if isinstance(sha, str) and sha not in seen:
                    seen.add(sha)
                    yield sha
