"""Migrations: up from empty, down to empty, matching the models, safe to run at once."""

from __future__ import annotations

import asyncio

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect

from bot.store import migrate
from bot.store.engine import make_engine
from bot.store.schema import Base

TABLES = {"sessions", "messages", "runs", "confirmations", "alembic_version"}


async def tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            return set(await connection.run_sync(lambda c: inspect(c).get_table_names()))
    finally:
        await engine.dispose()


async def test_up_from_empty_matches_the_models_and_down_leaves_nothing(
    database_url: str,
) -> None:
    assert await migrate.current(database_url) is None
    await migrate.upgrade(database_url)
    assert await migrate.current(database_url) == migrate.head()
    assert await tables(database_url) == TABLES
    engine = make_engine(database_url)
    try:
        async with engine.connect() as connection:
            differences = await connection.run_sync(
                lambda c: compare_metadata(
                    MigrationContext.configure(c, opts={"compare_type": True}), Base.metadata
                )
            )
    finally:
        await engine.dispose()
    assert differences == []
    await migrate.downgrade(database_url, "base")
    assert await migrate.current(database_url) is None
    assert await tables(database_url) <= {"alembic_version"}
    await migrate.upgrade(database_url)  # and up again
    assert await migrate.current(database_url) == migrate.head()


async def test_processes_starting_together_migrate_once(database_url: str) -> None:
    await asyncio.gather(*(migrate.upgrade(database_url) for _ in range(4)))
    assert await migrate.current(database_url) == migrate.head()
