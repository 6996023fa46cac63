"""The database as the processes use it: migrated, connected, and its two sides."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from sqlalchemy.exc import InterfaceError, OperationalError, SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.config.database_url import database_url
from bot.config.pricing import PriceTable
from bot.config.settings import Settings
from bot.store import revision as schema
from bot.store.archive import Archive
from bot.store.engine import make_engine, shown_url
from bot.store.history import History
from bot.store.sealing import TraceSeal
from bot.store.sqlite_file import DatabaseFileGone, watch_file

log = logging.getLogger(__name__)
# The database is away (down, unreachable, locked, its file gone), not wrong: worth a retry.
UNAVAILABLE: tuple[type[Exception], ...] = (OperationalError, InterfaceError, DatabaseFileGone)
WAIT_S = 60.0


class DatabaseUnavailable(Exception):
    """The database did not answer while a process was starting; the message names it."""


class SchemaAhead(Exception):
    """The database was migrated by a newer Parley than this one: a process of this code
    starting on it would run code the schema has moved past, so it refuses (nothing written).
    """


@dataclass(frozen=True)
class Database:
    engine: AsyncEngine
    history: History
    archive: Archive

    def problem(self) -> str | None:
        """What keeps the record from being written (see `sqlite_file`), or None."""
        return self.archive.problem()

    async def aclose(self) -> None:
        await self.engine.dispose()


async def open_database(settings: Settings, *, wait: float = WAIT_S) -> Database:
    """Connect, first bringing the schema up to date so nobody has to run migrations. A
    database that is still starting (compose brings services up together) is waited for."""
    await upgrade(settings.database_url, wait=wait)
    engine = make_engine(settings.database_url)
    file = watch_file(engine)  # after the upgrade, which makes a missing file
    history = History(engine, PriceTable(settings.prices), TraceSeal.of(settings.trace_key))
    return Database(engine, history, Archive(engine, file))


async def upgrade(url: str, *, wait: float = WAIT_S, revision: str = "head") -> None:
    loop = asyncio.get_running_loop()
    deadline, delay = loop.time() + wait, 0.5
    while True:
        try:
            await _upgrade(url, revision)
            return
        except (OSError, SQLAlchemyError) as exc:
            where = shown_url(database_url(url))
            problem = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            if loop.time() + delay > deadline:
                raise DatabaseUnavailable(f"no database at {where} ({problem})") from None
            log.warning(
                "database at %s not ready (%s); trying again in %.1f s", where, problem, delay
            )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10)


async def _upgrade(url: str, revision: str) -> None:
    """Migrate unless the schema is at the head already (the usual case, seen with one query)."""
    at = await schema.current(url)
    if revision == "head" and at == schema.HEAD:
        return
    from bot.store import migrate  # noqa: PLC0415 (alembic is imported only to migrate)

    if at is not None and not migrate.known(at):
        where = shown_url(database_url(url))
        raise SchemaAhead(
            f"the database at {where} has its schema at {at}, newer than this version of "
            f"Parley knows (it needs {schema.HEAD}): it was migrated by a newer version. "
            "Run that version, or go back with it (`parley migrate "
            f"{schema.HEAD} --down`) or to the backup taken before the upgrade; "
            "nothing was changed"
        )
    await migrate.upgrade(url, revision)
