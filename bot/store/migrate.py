"""Bringing the schema up to date: `parley migrate`, and every process on start.

Processes start together (`parley up`, a deploy of several workers), so an upgrade holds a
lock while it runs: a PostgreSQL advisory lock, or a lock file beside the SQLite database.
Whoever gets it second finds the schema current and does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import IO

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from bot.store.engine import make_engine

SCRIPTS = Path(__file__).with_name("migrations")
PG_LOCK = 0x7061726C6579  # "parley": any fixed number shared by every process


def _config(connection: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    config.attributes["connection"] = connection
    return config


async def upgrade(database_url: str, revision: str = "head") -> None:
    async with _locked(database_url) as connection:
        await connection.run_sync(lambda c: command.upgrade(_config(c), revision))


async def downgrade(database_url: str, revision: str) -> None:
    async with _locked(database_url) as connection:
        await connection.run_sync(lambda c: command.downgrade(_config(c), revision))


async def current(database_url: str) -> str | None:
    """The schema's revision, or None for an empty database."""
    engine = make_engine(database_url)
    try:
        async with engine.connect() as connection:
            return await connection.run_sync(
                lambda c: MigrationContext.configure(c).get_current_revision()
            )
    finally:
        await engine.dispose()


def scripts_config() -> Config:
    """Alembic's configuration naming this code's migration scripts."""
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    return config


def known(revision: str) -> bool:
    """Whether `revision` is one of this code's migrations (an unknown one is a newer
    version's)."""
    try:
        return ScriptDirectory.from_config(scripts_config()).get_revision(revision) is not None
    except CommandError:
        return False


def head() -> str:
    revision = ScriptDirectory.from_config(scripts_config()).get_current_head()
    assert revision is not None
    return revision


@contextlib.asynccontextmanager
async def _locked(database_url: str) -> AsyncIterator[AsyncConnection]:
    engine = make_engine(database_url)
    try:
        async with _file_lock(engine), engine.begin() as connection:
            if engine.dialect.name == "postgresql":
                await connection.execute(text(f"SELECT pg_advisory_xact_lock({PG_LOCK})"))
            yield connection
    finally:
        await engine.dispose()


@contextlib.asynccontextmanager
async def _file_lock(engine: AsyncEngine) -> AsyncIterator[None]:
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        yield
        return
    handle = await asyncio.to_thread(_lock_file, Path(f"{database}.migrate-lock"))
    try:
        yield
    finally:
        handle.close()  # closing releases the lock


def _lock_file(path: Path) -> IO[str]:
    handle = path.open("a")
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle
