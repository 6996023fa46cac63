"""A worker's platforms begin to load once its first model request is out, or at once when
no message waits for it (`worker.platform_start`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from bot.llm.base import ModelRequest
from bot.llm.events import Finished, ProviderEvent, TextDelta
from bot.redis import keys
from worker import platform_start
from worker.platform_start import FirstCall, begin_platforms

REQUEST = ModelRequest(model="claude-test", system=[], messages=[])


class Answering:
    """A model that says hello; `closed` once closed."""

    name = "anthropic"
    closed = False

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        yield TextDelta(text="hello")
        yield Finished(reason="end_turn")

    async def aclose(self) -> None:
        self.closed = True


async def test_a_worker_with_nothing_waiting_begins_at_once(redis_url: str) -> None:
    async with Redis.from_url(redis_url) as redis:
        await redis.flushall()
        begin = asyncio.Event()
        await asyncio.wait_for(begin_platforms(redis, begin, asyncio.Event()), 30)
        assert begin.is_set()


async def test_a_worker_with_messages_waiting_begins_at_its_first_model_request(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(platform_start, "WITHIN_S", 600.0)  # only the request begins it here
    models = FirstCall(Answering())
    async with Redis.from_url(redis_url) as redis:
        await redis.flushall()
        await redis.zadd(keys.ARMED_SET, {"tg:1": 1})
        begin = asyncio.Event()
        beginning = asyncio.create_task(begin_platforms(redis, begin, models.called))
        for _ in range(5):
            await asyncio.to_thread(lambda: None)
        assert not begin.is_set()
        events = [event async for event in models.stream(REQUEST)]
        await asyncio.wait_for(beginning, 30)
        assert begin.is_set()
    assert events == [TextDelta(text="hello"), Finished(reason="end_turn")]
    assert models.name == "anthropic"
    await models.aclose()
    assert isinstance(models.provider, Answering) and models.provider.closed


async def test_messages_that_no_turn_here_takes_hold_the_platforms_back_only_a_while(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another worker may hold their sessions: the platforms still load, and the worker
    says it is ready."""
    monkeypatch.setattr(platform_start, "WITHIN_S", 0.05)
    async with Redis.from_url(redis_url) as redis:
        await redis.flushall()
        await redis.zadd(keys.ARMED_SET, {"tg:1": 1})
        begin = asyncio.Event()
        await asyncio.wait_for(begin_platforms(redis, begin, asyncio.Event()), 30)
        assert begin.is_set()
