"""The task book on real databases (SQLite and PostgreSQL) and a real Redis."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.store.database import Database
from bot.store.people import People
from bot.tasks.book import TaskBook
from tests.support.databases import each_database, opened  # noqa: F401 (fixtures)


@pytest.fixture
def redis(redis_client: Redis) -> Redis:
    return redis_client


@pytest.fixture
def book(db: Database, redis: Redis) -> TaskBook:
    return TaskBook(db.engine, redis)


@pytest.fixture
def people(db: Database) -> People:
    return People(db.engine)
