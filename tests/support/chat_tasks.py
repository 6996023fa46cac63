"""Scheduled tasks made directly in a stack's database, as the tools or the configuration
would make them, for the tests of what chats show of them."""

from __future__ import annotations

import zoneinfo
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from redis.asyncio import Redis

from adapters.platforms.targets import target_of
from bot.store.database import open_database
from bot.tasks.book import NewTask, TaskBook
from bot.tasks.model import Target, Task
from bot.vocabulary.envelope import Sender
from bot.vocabulary.schedule import parse_when
from tests.support.stack import Stack, web_settings


@asynccontextmanager
async def task_book(stack: Stack) -> AsyncIterator[TaskBook]:
    """The task book of the stack's database and Redis."""
    database = await open_database(web_settings(stack.env))
    redis = Redis.from_url(stack.redis_url)
    try:
        yield TaskBook(database.engine, redis)
    finally:
        await redis.aclose()
        await database.aclose()


async def add_task(
    book: TaskBook,
    session: str,
    creator: Sender,
    prompt: str,
    *,
    when: str = "every 2 hours",
    name: str | None = None,
) -> Task:
    """A task answered in `session` (a topic or thread of a chat, or the chat itself)."""
    now = datetime.now(UTC)
    new = NewTask(
        target=target_of(session),
        creator=creator,
        prompt=prompt,
        when=when,
        schedule=parse_when(when, zoneinfo.ZoneInfo("Europe/Lisbon"), now),
        name=name,
    )
    return await book.add(new, max_active=20, now=now)


def task_as_stored(
    target: Target, creator: Sender, when: str, now: datetime, **fields: Any
) -> Task:
    """An active task as the book would return it right after adding it at `now` (read in
    Europe/Lisbon), for tests that need no database; `fields` override (id, prompt, …)."""
    schedule = parse_when(when, zoneinfo.ZoneInfo("Europe/Lisbon"), now)
    values: dict[str, Any] = {
        "id": 1,
        "prompt": "call Ann",
        "if_missed": "skip",
        "status": "active",
        "next_run_at": schedule.next_runs(now, 1)[0],
        "last_run_at": None,
        "runs": 0,
        "missed": 0,
        "created_at": now,
        **fields,
    }
    return Task(target=target, creator=creator, when=when, schedule=schedule, **values)
