"""What tools reach beyond their call with: the database's tasks, people, memories and grants.

Passed in the `ToolContext` to tools that run on the worker's loop (`isolation="loop"`),
whose connections these are; a tool in a thread or a helper process gets none.
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
class ToolServices:
    tasks: TaskBook
    people: People
    memories: Memories
    grants: Grants

    @classmethod
    def open(cls, engine: AsyncEngine, redis: Redis) -> ToolServices:
        """All of them on one database (and Redis, where tasks are announced)."""
        return cls(TaskBook(engine, redis), People(engine), Memories(engine), Grants(engine))
