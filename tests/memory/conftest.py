"""Memory's tools and prompt on real databases (SQLite and PostgreSQL) and a real Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.config import Settings
from bot.store.database import Database, open_database
from bot.store.memory import Memories
from bot.store.people import People
from bot.tasks.book import TaskBook
from bot.tools.services import ToolServices
from tests.support.stack import database_for


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(tmp_path: Path, request: pytest.FixtureRequest) -> str:
    return database_for(request.param, tmp_path, request)


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    database = await open_database(Settings(_env_file=None, database_url=database_url))
    try:
        yield database
    finally:
        await database.aclose()


@pytest.fixture
def memories(db: Database) -> Memories:
    return Memories(db.engine)


@pytest.fixture
def services(db: Database, redis_client: Redis, memories: Memories) -> ToolServices:
    return ToolServices(TaskBook(db.engine, redis_client), People(db.engine), memories)
