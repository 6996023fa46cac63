"""A chat's activation on a real Redis and real databases: the choice kept in SQL and read
through Redis by every process, a change seen by the others at once, a stale read never
overwriting it; the burst of unaddressed messages counted per chat and minute."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from adapters.chat.activation import BURST, Activations
from bot.redis import keys
from bot.store.chats import ChatSettings
from bot.store.database import Database
from bot.vocabulary.chat_settings import Activation
from tests.support.databases import each_database, opened  # noqa: F401 (fixtures)


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def test_a_choice_is_seen_by_every_process_at_once(db: Database, redis: Redis) -> None:
    web, other = (
        Activations(redis, ChatSettings(db.engine)),
        Activations(redis, ChatSettings(db.engine)),
    )
    assert not await web.always("tg:-1", default="mention")  # read, and cached as the default
    assert await web.always("tg:-1", default="always")  # nobody chose: the default applies
    await other.choose("tg:-1", "always")
    assert await web.always("tg:-1", default="mention")
    assert not await web.always("tg:-2", default="mention")
    await redis.delete(keys.chat_activation("tg:-1"))  # Redis lost it: SQL still has it
    assert await web.always("tg:-1", default="mention")


class SlowReads(ChatSettings):
    """The database's answer held back until told: a process that read the old row while
    another changes it."""

    def __init__(self, db: Database) -> None:
        super().__init__(db.engine)
        self.read, self.go_on = asyncio.Event(), asyncio.Event()

    async def activation(self, chat: str) -> Activation | None:
        found = await super().activation(chat)
        self.read.set()
        await self.go_on.wait()
        return found


async def test_a_read_that_missed_never_overwrites_a_newer_choice(
    db: Database, redis: Redis
) -> None:
    slow = SlowReads(db)
    filling = asyncio.create_task(Activations(redis, slow).current("tg:-1", default="mention"))
    await slow.read.wait()  # it read no choice...
    await Activations(redis, ChatSettings(db.engine)).choose("tg:-1", "always")
    slow.go_on.set()  # ...and caches what it read only after the choice was made
    assert await filling == "mention"
    assert await Activations(redis, slow).current("tg:-1", default="mention") == "always"


async def test_unaddressed_messages_start_turns_up_to_a_burst_per_chat(
    db: Database, redis: Redis
) -> None:
    activations = Activations(redis, ChatSettings(db.engine))
    counted = [await activations.within_burst("tg:-1") for _ in range(BURST + 2)]
    assert counted == [True] * BURST + [False, False]
    assert await activations.within_burst("tg:-2")
    assert 0 < await redis.ttl(keys.chat_burst("tg:-1")) <= 60
