"""The task book on real databases (SQLite and PostgreSQL) and a real Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.config import Settings
from bot.store.database import Database, open_database
from bot.store.people import People
from bot.tasks.book import TaskBook
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
def redis(redis_client: Redis) -> Redis:
    return redis_client


@pytest.fixture
def book(db: Database, redis: Redis) -> TaskBook:
    return TaskBook(db.engine, redis)


@pytest.fixture
def people(db: Database) -> People:
    return People(db.engine)
