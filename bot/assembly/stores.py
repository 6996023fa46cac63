"""The database's stores Parley's own tools are built on: the task book, the people's
preferences, the memories, the chats' settings (the skills switched off in each).

A process that has them (a worker, and `parley web` for its list of tools) builds the
scheduled-task, memory and preference tools on them (`bot.assembly.catalog`); no tool is
handed the bundle, each gets the store it works on. Where there are none (`parley mcp`,
`parley chat`), those tools are not offered at all. A worker's turns read their own
(`bot.session.deps.SessionStores`). `parley doctor` counts a worker's tools on stores that
reach nothing (`unopened`): it reads no database to count them, nor creates a file.
"""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bot.memory.recall import Recall
from bot.store.chats import ChatSettings
from bot.store.people import People
from bot.tasks.book import TaskBook


@dataclass(frozen=True)
class ToolStores:
    tasks: TaskBook
    people: People
    recall: Recall  # the memories, found by meaning with a model
    chats: ChatSettings | None = None  # None: no skill is switched off anywhere

    @classmethod
    def open(cls, engine: AsyncEngine, redis: Redis, recall: Recall | None = None) -> ToolStores:
        """All of them on one database (and Redis, where tasks are announced); `recall` is the
        process's (`Recall.on`), by words alone when none is given."""
        recall = recall or Recall.on(engine)
        return cls(TaskBook(engine, redis), People(engine), recall, ChatSettings(engine))

    @classmethod
    def unopened(cls) -> ToolStores:
        """Stores on an in-memory database and a Redis client that are never connected:
        for building the tools to name or count them, never to call them."""
        return cls.open(create_async_engine("sqlite+aiosqlite://"), Redis())
