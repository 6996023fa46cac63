"""What a group said before the bot was addressed, on a real Redis: the latest N kept per
chat, bounded in characters, taken once, and left out when the message would not fit."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from adapters.chat.group_context import MAX_CHARS, MAX_LINE, GroupContext
from bot.redis import keys
from bot.redis.results import done
from bot.vocabulary.envelope import MAX_TEXT


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url)
    yield client
    await client.aclose()


async def test_the_newest_fit_and_are_taken_once(redis: Redis) -> None:
    context = GroupContext(redis, 50)
    for n in range(60):
        await context.keep("tg:-1", "Bob", f"{n:02d} " + "x" * 1000)
    await done(redis.rpush(keys.group_context("tg:-1"), b"not json", b"[1]", b'{"who": 1}'))
    said = await context.with_recent("tg:-1", "question")
    lines = [line for line in said.splitlines() if line.startswith("Bob: ")]
    assert lines[-1].startswith("Bob: 59 ") and all(len(line) == 5 + MAX_LINE for line in lines)
    assert sum(len(line) + 1 for line in lines) <= MAX_CHARS + 1
    assert len(lines) == MAX_CHARS // (5 + MAX_LINE + 1)
    assert said.endswith("</untrusted-data>\n\nquestion")
    assert await context.with_recent("tg:-1", "again") == "again"
    assert await redis.ttl(keys.group_context("tg:-1")) == -2  # gone


async def test_off_or_too_long_leaves_the_message_alone(redis: Redis) -> None:
    off = GroupContext(redis, 0)
    await off.keep("tg:-1", "Bob", "hello")
    assert await off.with_recent("tg:-1", "hi") == "hi"
    assert await redis.exists(keys.group_context("tg:-1")) == 0
    on = GroupContext(redis, 3)
    await on.keep("tg:-1", "Bob", "hello")
    long = "y" * (MAX_TEXT - 10)
    assert await on.with_recent("tg:-1", long) == long
