"""The tables. Changing one means a new migration in `migrations/versions`.

Rows are written so that writing them again changes nothing: messages are keyed by the id
they carry in the session's state, runs by their session and first envelope, approvals by the
confirmation id. That is what makes a turn resumed after a crash safe to record twice.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# Names for constraints, so migrations can refer to them on every database.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
# SQLite numbers rows only through INTEGER PRIMARY KEY; PostgreSQL gets a bigint.
RowId = BigInteger().with_variant(Integer(), "sqlite")


def utcnow() -> datetime:
    return datetime.now(UTC)


class UtcDateTime(TypeDecorator[datetime]):
    """Timestamps stored in UTC and read back aware, also from SQLite (which keeps no zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return value.astimezone(UTC) if value is not None else None

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Tokens:
    """Token counts as the providers report them; `cost_usd` is an estimate from list prices."""

    input_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    output_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cache_read_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cache_write_tokens: Mapped[int] = mapped_column(BigInteger, default=0)
    cost_usd: Mapped[float | None] = mapped_column(Float, nullable=True)


class SessionRow(Tokens, Base):
    """One conversation. Totals are recomputed from its runs, never incremented, so a
    record written twice cannot count twice. `context_from` is the last message id before
    the latest /new: a session rebuilt from SQL starts after it."""

    __tablename__ = "sessions"

    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    platform: Mapped[str] = mapped_column(String(32))
    chat_kind: Mapped[str] = mapped_column(String(32), default="private")
    title: Mapped[str] = mapped_column(String(200), default="")
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow, index=True)
    message_count: Mapped[int] = mapped_column(Integer, default=0)
    run_count: Mapped[int] = mapped_column(Integer, default=0)
    context_from: Mapped[int] = mapped_column(RowId, default=0)


# The runs of a window of time across sessions (the dashboard, `/api/metrics/*`) are read from
# this index alone: it holds every column their counts, averages and filters read, so a
# window of 100,000 runs never reads the table's rows, each with its trace (migration 0010).
WINDOW_INDEX = "ix_runs_window"
WINDOW_COLUMNS = (
    "status", "latency_ms", "reliability", "finish_reason", "model", "trigger", "session_key",
    "mode", "prompt_hash", "tools_hash", "input_tokens", "output_tokens", "cost_usd",
    "iterations", "calling_ms", "streaming_ms", "tools_ms", "person_ms",
)  # fmt: skip
# On SQLite, a second one holds what the tools' and errors' charts read (the tool usage and
# the error message, unbounded texts a PostgreSQL index key may not hold; PostgreSQL reads
# them from rows whose trace is stored apart, TOAST). Made by the migration, not modelled.
OUTCOMES_INDEX = "ix_runs_outcomes"


class RunRow(Tokens, Base):
    """One run of the agent: from a message (or a decision) to a final answer, a stop, or a
    pause for approval. A run resumed after a crash is the same row."""

    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_session_started", "session_key", "started_at"),
        Index(WINDOW_INDEX, "started_at", *WINDOW_COLUMNS),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    session_key: Mapped[str] = mapped_column(ForeignKey("sessions.key", ondelete="CASCADE"))
    envelope_ids: Mapped[list[str]] = mapped_column(JSON)
    trigger: Mapped[str] = mapped_column(String(16))
    sender: Mapped[str] = mapped_column(String(200), default="")
    model: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(32))
    finish_reason: Mapped[str] = mapped_column(String(64))
    iterations: Mapped[int] = mapped_column(Integer, default=0)
    started_at: Mapped[datetime] = mapped_column(UtcDateTime)
    finished_at: Mapped[datetime] = mapped_column(UtcDateTime)
    latency_ms: Mapped[int] = mapped_column(Integer, default=0)
    first_text_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    trace: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # `bot.trace`
    reliability: Mapped[int | None] = mapped_column(Integer, nullable=True)  # 0-100
    # the trace's `metrics.tool_usage` ({name: calls}) again, small, for the tools chart; SQL
    # NULL without a trace (not JSON's null, which PostgreSQL's json_each refuses)
    tool_usage: Mapped[dict[str, int] | None] = mapped_column(
        JSON(none_as_null=True), nullable=True
    )
    # What it ran with (`bot.vocabulary.ran_with`), and the three fields runs are most often
    # filtered and grouped by, beside it in the window's index; NULL for a run recorded
    # before runs kept it (migration 0016).
    config: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    mode: Mapped[str | None] = mapped_column(String(16), nullable=True)
    prompt_hash: Mapped[str | None] = mapped_column(String(16), nullable=True)
    tools_hash: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # Where its time went (`bot.trace.states`), in ms, for the window's averages; NULL for a
    # run recorded before it was counted (migration 0019). `other` is the rest of its latency.
    calling_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    streaming_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    tools_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    person_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)


class MessageRow(Tokens, Base):
    """One message of the conversation, with its content blocks as the state holds them.
    Usage is that of the model call that wrote it (assistant messages only)."""

    __tablename__ = "messages"
    __table_args__ = (Index("ix_messages_session_seq", "session_key", "seq"),)

    seq: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    id: Mapped[str] = mapped_column(String(32), unique=True)
    session_key: Mapped[str] = mapped_column(ForeignKey("sessions.key", ondelete="CASCADE"))
    run_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    role: Mapped[str] = mapped_column(String(16))
    summary: Mapped[bool] = mapped_column(Boolean, default=False)
    sender: Mapped[str | None] = mapped_column(String(200), nullable=True)
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    content: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    text: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow, index=True)
    voice: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)  # its voice note


class MessageFileRow(Base):
    """A file a recorded message carries (an image, a document, the text taken out of a PDF),
    by its hash: what says whether a file is still wanted once a session, or the old part of
    the record, is deleted (`bot.store.archive`). The same file in two messages is one file."""

    __tablename__ = "message_files"

    message_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64), primary_key=True, index=True)


class ContextRow(Base):
    """A message of a session's context that its hot state in Redis no longer holds: the
    older part of a long context, in order, as the exact JSON the state had
    (`bot.session.states`). `epoch` names one context (compaction and /new start another);
    `fence` is the lease's number of the worker that wrote the row, so a worker that lost
    the session never overwrites its successor's rows. No foreign key: a turn may move
    messages here before the session's first run is recorded."""

    __tablename__ = "context_messages"

    session_key: Mapped[str] = mapped_column(String(300), primary_key=True)
    epoch: Mapped[str] = mapped_column(String(32), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    fence: Mapped[int] = mapped_column(BigInteger)
    body: Mapped[str] = mapped_column(Text)


class ConfirmationRow(Base):
    """Who was asked to approve which tool calls, and who decided what, when."""

    __tablename__ = "confirmations"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    session_key: Mapped[str] = mapped_column(
        ForeignKey("sessions.key", ondelete="CASCADE"), index=True
    )
    envelope_id: Mapped[str] = mapped_column(String(200))
    requester: Mapped[str] = mapped_column(String(200))
    calls: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(16))
    decided_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, index=True)
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime)
    decided_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)


class PersonRow(Base):
    """What a person chose for themselves, across chats and platforms (`id` is the sender id,
    `tg:123`); a person who chose nothing has no row."""

    __tablename__ = "people"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    timezone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    language: Mapped[str | None] = mapped_column(String(64), nullable=True)
    model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    instruction: Mapped[str | None] = mapped_column(String(500), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class GrantRow(Base):
    """A tool `person` may run without being asked in `chat` (`bot.vocabulary.chats.chat_of`:
    a chat's topics and threads share its grants), from a press of "Always allow";
    `granted_by` is who pressed it (the person, or an admin deciding for them)."""

    __tablename__ = "grants"
    __table_args__ = (UniqueConstraint("person", "chat", "tool"),)

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    person: Mapped[str] = mapped_column(String(200))
    chat: Mapped[str] = mapped_column(String(300), index=True)
    tool: Mapped[str] = mapped_column(String(200))
    granted_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class ChatSettingRow(Base):
    """What the admins of a chat chose for everyone in it (`bot.vocabulary.chat_settings`):
    `key` is a chat (`bot.vocabulary.chats.chat_of`) or a Telegram forum topic, whose own
    instruction comes before its chat's; a chat that chose nothing has no row."""

    __tablename__ = "chat_settings"

    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    instruction: Mapped[str | None] = mapped_column(Text, nullable=True)
    activation: Mapped[str | None] = mapped_column(String(16), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class ChatToolRow(Base):
    """A tool switched off in `chat` by one of its admins: not offered to the model in the
    turns of any of its topics or threads."""

    __tablename__ = "chat_tools_off"

    chat: Mapped[str] = mapped_column(String(300), primary_key=True)
    tool: Mapped[str] = mapped_column(String(200), primary_key=True)
    switched_by: Mapped[str] = mapped_column(String(200))
    switched_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class PairedRow(Base):
    """A person an admin let in by their pairing code (`bot.people.pairing`): a user, as if
    PARLEY_ALLOWED_USERS listed them, until an admin unpairs them. `person` is the sender id
    (`tg:123`), looked up by its primary key on every message of someone the settings do not
    let in; `approved_by` is the admin's id, or `cli` for `parley pair approve`."""

    __tablename__ = "paired_people"

    person: Mapped[str] = mapped_column(String(200), primary_key=True)
    platform: Mapped[str] = mapped_column(String(32))
    approved_by: Mapped[str] = mapped_column(String(200))
    approved_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class TaskRow(Base):
    """A scheduled task: a prompt the scheduler turns into an envelope of kind `scheduled` at
    each run time, answered where the task was made (`session`, `platform`, `reply_to`).

    `kind` and `spec` are the schedule (`bot.vocabulary.schedule.Schedule`); `next_run_at` is kept
    by the scheduler after every run, so a run missed while no scheduler ran is noticed at the
    next start and handled by `if_missed`. A task from the configuration has a `name`.
    `tokens_per_day` is its own daily token cap within the deployment's; a `quiet` task (a
    check-in) posts only when its run has something to say (`bot.tasks.spend`)."""

    __tablename__ = "tasks"
    __table_args__ = (Index("ix_tasks_status_next", "status", "next_run_at"),)

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    name: Mapped[str | None] = mapped_column(String(100), unique=True, nullable=True)
    session_key: Mapped[str] = mapped_column(String(300), index=True)
    platform: Mapped[str] = mapped_column(String(32))
    chat_kind: Mapped[str] = mapped_column(String(32))
    reply_to: Mapped[dict[str, Any]] = mapped_column(JSON)
    creator: Mapped[str] = mapped_column(String(200), index=True)
    creator_name: Mapped[str] = mapped_column(String(200), default="")
    prompt: Mapped[str] = mapped_column(Text)
    when: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16))
    spec: Mapped[str] = mapped_column(String(200))
    timezone: Mapped[str] = mapped_column(String(64))
    anchor: Mapped[datetime] = mapped_column(UtcDateTime)
    if_missed: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    next_run_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    last_run_at: Mapped[datetime | None] = mapped_column(UtcDateTime, nullable=True)
    runs: Mapped[int] = mapped_column(Integer, default=0)
    missed: Mapped[int] = mapped_column(Integer, default=0)
    ended_by: Mapped[str | None] = mapped_column(String(200), nullable=True)
    run_config: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    tokens_per_day: Mapped[int | None] = mapped_column(Integer, nullable=True)
    quiet: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())


DIGEST_INDEX = "ix_memories_scope_day"


class MemoryRow(Base):
    """Something a person (or a group chat) asked to be remembered, across `/new` and
    restarts. `scope` is whose it is (`tg:123`, `chat:tg:-100123`; see `bot.memory.scope`),
    and every query filters by it. The full-text index is not modelled here: the migration
    makes it (an FTS5 table kept in step by triggers on SQLite, a generated `tsvector`
    column on PostgreSQL), and `SEARCH_INDEX` names it so schema comparisons leave it be."""

    __tablename__ = "memories"
    __table_args__ = (
        UniqueConstraint("scope", "text"),
        Index(DIGEST_INDEX, "scope", "day", unique=True),
    )

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    scope: Mapped[str] = mapped_column(String(200))
    text: Mapped[str] = mapped_column(String(500))
    folded: Mapped[str] = mapped_column(Text)  # what search reads: `bot.store.memory.fold`
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)
    # a day's digest (`bot.memory.digest`): the day it tells of; NULL for what people asked
    # to keep. One digest a scope and day (NULLs are distinct to the unique index).
    day: Mapped[date | None] = mapped_column(Date, nullable=True)


class DigestSourceRow(Base):
    """A session a digest was written from: deleting the session deletes the digests that
    tell of it (`bot.store.archive`), since they hold what was said there."""

    __tablename__ = "digest_sources"

    memory_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("memories.id", ondelete="CASCADE"), primary_key=True
    )
    session_key: Mapped[str] = mapped_column(String(300), primary_key=True, index=True)


class DigestOffRow(Base):
    """A scope (a person, or a group chat) whose days are not digested: its person, or an
    admin of the chat, said so (`/memory digest off`)."""

    __tablename__ = "digests_off"

    scope: Mapped[str] = mapped_column(String(200), primary_key=True)
    by: Mapped[str] = mapped_column(String(200))
    at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class MemoryVectorRow(Base):
    """A memory's text as an embedding model placed it, for recall by meaning: `vector` is
    the unit-length vector as little-endian float32s, `model` the name of the model that made
    it (`bot.memory.embeddings`), so a memory embedded by another model than the one
    configured now is embedded again, and recall meanwhile compares only like with like. It
    goes with its memory (the foreign key's cascade), and with it from every deletion."""

    __tablename__ = "memory_vectors"

    memory_id: Mapped[int] = mapped_column(
        RowId, ForeignKey("memories.id", ondelete="CASCADE"), primary_key=True
    )
    model: Mapped[str] = mapped_column(String(200))
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    embedded_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class EvaluationRow(Base):
    """An evaluation: recorded runs replayed with a candidate configuration (`bot.lab`).
    `config` is the candidate (a `RunConfig`'s fields, and `instructions`), `budget` the
    tokens its replays may take in all, `status` running or cancelled (done is read off its
    rows)."""

    __tablename__ = "evaluations"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    label: Mapped[str] = mapped_column(String(200), default="")
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    lanes: Mapped[int] = mapped_column(Integer)
    budget: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="running")
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UtcDateTime, default=utcnow)


class EvaluationRunRow(Base):
    """One run of an evaluation: the recorded run, the replay's run id (known before it
    runs), and why it was not replayed, if it was not."""

    __tablename__ = "evaluation_runs"

    evaluation_id: Mapped[str] = mapped_column(
        ForeignKey("evaluations.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(String(32))
    replay_run: Mapped[str] = mapped_column(String(32), index=True)
    skipped: Mapped[str | None] = mapped_column(String(200), nullable=True)


FTS_TABLE = "memories_fts"  # SQLite; FTS5 adds its shadow tables, memories_fts_*
SEARCH_COLUMN = "search"  # PostgreSQL's generated tsvector column on `memories`
SEARCH_INDEX = "ix_memories_search"


def modelled(name: str | None, type_: str, parent_names: Any) -> bool:
    """False for the full-text objects the migration makes outside the models, so that
    comparing the models with a database (alembic's autogenerate, the migration test) does
    not take them for leftovers to drop."""
    if type_ == "table":
        return not (name or "").startswith(FTS_TABLE)
    table = parent_names.get("table_name") if isinstance(parent_names, dict) else None
    if table == "memories" and type_ in ("column", "index"):
        return name not in (SEARCH_COLUMN, SEARCH_INDEX)
    if table == "runs" and type_ == "index":
        return name != OUTCOMES_INDEX
    return True
