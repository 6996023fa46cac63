"""The schema revision this code needs, and the one a database is at, read without alembic.

Importing alembic (and reading every migration script) is a noticeable part of a process's
start-up, yet the schema is almost always current already. So a process starting up
compares the two revisions with one query and runs the migrations (`bot.store.migrate`) only
when they differ.
"""

from __future__ import annotations

from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.engine import make_engine

# The newest migration's revision; tests/store/test_migrations.py keeps it equal to alembic's.
HEAD = "0021"
TABLE = "alembic_version"  # where alembic keeps a database's revision


def newer(at: str) -> bool:
    """Whether revision `at` comes after this code's HEAD: migrated by a newer version.
    Revisions are numbered "0001", "0002", ... (tests/store/test_migrations.py holds it)."""
    return at.isdigit() and len(at) == len(HEAD) and at > HEAD


async def current(database_url: str) -> str | None:
    """The database's revision, or None for an empty one. An unreachable database raises,
    as connecting would (OSError or a SQLAlchemyError)."""
    engine = make_engine(database_url)
    try:
        return await read(engine)
    finally:
        await engine.dispose()


async def read(engine: AsyncEngine) -> str | None:
    """The revision of the database behind `engine` (a process's own, for /readyz)."""
    async with engine.connect() as connection:
        return await connection.run_sync(_read)


def _read(connection: Connection) -> str | None:
    if not inspect(connection).has_table(TABLE):
        return None
    return connection.execute(text(f"SELECT version_num FROM {TABLE}")).scalar()
