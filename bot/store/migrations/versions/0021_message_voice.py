"""An answer's voice note, kept with its message.

`voice` is the file reference (JSON) of the voice note an assistant message was said aloud
as (`bot.session.voice`), so a conversation's history shows it again; the file itself is
counted among the message's files in `message_files`, as every file a message carries.
Messages recorded before have none.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-10
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("voice", sa.JSON(), nullable=True))


def downgrade() -> None:
    # in place on both (SQLite 3.35+), as the column is in no index
    op.execute("ALTER TABLE messages DROP COLUMN voice")
