"""The database's stores a worker works with, opened once per worker: the task book, the
people's preferences, the memories and the grants.

A worker's turns read them before they run (`bot.session.turn`), and Parley's own tools that
reach the database are built on them (`bot.assembly.catalog`); no tool is handed the bundle,
each gets the store it works on. Where there is none (`parley mcp`, `parley chat`), those
tools are not offered at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.grants import Grants
from bot.store.memory import Memories
from bot.store.people import People
from bot.tasks.book import TaskBook


@dataclass(frozen=True)
class Stores:
    tasks: TaskBook
    people: People
    memories: Memories
    grants: Grants

    @classmethod
    def open(cls, engine: AsyncEngine, redis: Redis) -> Stores:
        """All of them on one database (and Redis, where tasks are announced)."""
        return cls(TaskBook(engine, redis), People(engine), Memories(engine), Grants(engine))
