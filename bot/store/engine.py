"""Connecting to the database named by DATABASE_URL: SQLite by default, PostgreSQL in
production. SQLite gets WAL (readers never wait for the writer), a busy timeout (several
processes write to one file) and foreign keys (which it leaves off unless asked)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bot.config.database_url import BadDatabaseUrl, database_url
from bot.config.settings import ConfigError

BUSY_TIMEOUT_S = 30
# The pool, per process: every connection it may open is kept open. A connection opened for
# a moment (SQLAlchemy's "overflow") costs more CPU than the turn's reads it serves (for
# PostgreSQL the TCP and TLS handshake, authentication, and each statement prepared again;
# for SQLite a thread of its own and the file opened); under load a worker opened one for
# most turns. A read that finds all of them busy waits for one, which takes a millisecond
# or two. Half may write at once (`writers`). An in-memory SQLite database keeps SQLAlchemy's
# single shared connection: another would be another, empty, database.
POOL_SIZE = 10
KEPT_OPEN = {"pool_size": POOL_SIZE, "max_overflow": 0}


def shown_url(url: URL) -> str:
    """For logs and errors: never the password."""
    return url.render_as_string(hide_password=True)


def make_engine(raw: str) -> AsyncEngine:
    try:
        url = database_url(raw)
    except BadDatabaseUrl as exc:  # the settings refuse it first; a caller may not have them
        raise ConfigError(str(exc)) from None
    if url.get_backend_name() != "sqlite":
        return create_async_engine(url, pool_pre_ping=True, **KEPT_OPEN)
    pool: dict[str, int] = {}
    if url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
        pool = KEPT_OPEN
    engine = create_async_engine(url, connect_args={"timeout": BUSY_TIMEOUT_S}, **pool)
    event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    return engine


def writers(engine: AsyncEngine) -> int:
    """How many of a process's pooled connections the record's writes may hold at once, so
    that a turn's reads always find one: SQLite writes one transaction at a time whoever
    asks (more writers would only wait for its lock, each holding a connection), PostgreSQL
    gets half of its pool, and the other half is left to the reads."""
    return 1 if engine.dialect.name == "sqlite" else POOL_SIZE // 2


def _sqlite_pragmas(connection: Any, record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_S * 1000}")
    cursor.close()
