"""Memory's tools and prompt on real databases (SQLite and PostgreSQL) and a real Redis."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.memory.recall import Recall
from bot.session.deps import SessionStores
from bot.store.chats import ChatSettings
from bot.store.database import Database
from bot.store.grants import Grants
from bot.store.memory import Memories
from bot.store.memory_vectors import MemoryVectors
from bot.store.people import People
from bot.store.turn_facts import TurnReads
from bot.tasks.book import TaskBook
from tests.support.databases import each_database, opened  # noqa: F401 (fixtures)


@pytest.fixture
def memories(db: Database) -> Memories:
    return Memories(db.engine)


@pytest.fixture
def services(db: Database, redis_client: Redis, memories: Memories) -> SessionStores:
    tasks, people, grants = TaskBook(db.engine, redis_client), People(db.engine), Grants(db.engine)
    chats = ChatSettings(db.engine)
    recall = Recall(memories, MemoryVectors(db.engine))
    return SessionStores(people, recall, grants, tasks, chats, TurnReads(db.engine))
