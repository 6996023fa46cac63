"""Sessions, messages, runs and the approvals audit.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _when(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def _tokens() -> list[sa.Column[object]]:
    counts = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    columns: list[sa.Column[object]] = [
        sa.Column(name, sa.BigInteger(), nullable=False) for name in counts
    ]
    return [*columns, sa.Column("cost_usd", sa.Float(), nullable=True)]


def _session_key() -> sa.Column[object]:
    return sa.Column(
        "session_key",
        sa.String(300),
        sa.ForeignKey("sessions.key", ondelete="CASCADE"),
        nullable=False,
    )


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("key", sa.String(300), primary_key=True),
        sa.Column("platform", sa.String(32), nullable=False),
        sa.Column("chat_kind", sa.String(32), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("model", sa.String(200), nullable=True),
        _when("created_at"),
        _when("updated_at"),
        sa.Column("message_count", sa.Integer(), nullable=False),
        sa.Column("run_count", sa.Integer(), nullable=False),
        sa.Column("context_from", ROW_ID, nullable=False),
        *_tokens(),
    )
    op.create_index("ix_sessions_updated_at", "sessions", ["updated_at"])
    op.create_table(
        "runs",
        sa.Column("id", sa.String(32), primary_key=True),
        _session_key(),
        sa.Column("envelope_ids", sa.JSON(), nullable=False),
        sa.Column("trigger", sa.String(16), nullable=False),
        sa.Column("sender", sa.String(200), nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("finish_reason", sa.String(64), nullable=False),
        sa.Column("iterations", sa.Integer(), nullable=False),
        _when("started_at"),
        _when("finished_at"),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("first_text_ms", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        *_tokens(),
    )
    op.create_index("ix_runs_session_started", "runs", ["session_key", "started_at"])
    op.create_table(
        "messages",
        sa.Column("seq", ROW_ID, primary_key=True, autoincrement=True),
        sa.Column("id", sa.String(32), nullable=False, unique=True),
        _session_key(),
        sa.Column("run_id", sa.String(32), nullable=True),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("summary", sa.Boolean(), nullable=False),
        sa.Column("sender", sa.String(200), nullable=True),
        sa.Column("model", sa.String(200), nullable=True),
        sa.Column("content", sa.JSON(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        _when("created_at"),
        *_tokens(),
    )
    op.create_index("ix_messages_session_seq", "messages", ["session_key", "seq"])
    op.create_index("ix_messages_created_at", "messages", ["created_at"])
    op.create_table(
        "confirmations",
        sa.Column("id", sa.String(32), primary_key=True),
        _session_key(),
        sa.Column("envelope_id", sa.String(200), nullable=False),
        sa.Column("requester", sa.String(200), nullable=False),
        sa.Column("calls", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("decided_by", sa.String(200), nullable=True),
        _when("created_at"),
        _when("expires_at"),
        _when("decided_at", nullable=True),
    )
    op.create_index("ix_confirmations_session_key", "confirmations", ["session_key"])
    op.create_index("ix_confirmations_created_at", "confirmations", ["created_at"])


def downgrade() -> None:
    for table in ("confirmations", "messages", "runs", "sessions"):
        op.drop_table(table)
