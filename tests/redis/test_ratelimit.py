"""The shared rate budget, on a real Redis, used by several clients at once."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio import Redis

from bot.redis.ratelimit import RateBudget, Scope


async def test_concurrent_callers_share_one_budget(redis_url: str) -> None:
    clients = [Redis.from_url(redis_url) for _ in range(4)]  # as if four workers
    chat = Scope("test:chat", rate=20, burst=5)
    grants: list[float] = []

    async def caller(budget: RateBudget) -> None:
        for _ in range(10):
            await budget.take([chat])
            grants.append(time.monotonic())

    started = time.monotonic()
    await asyncio.gather(*(caller(RateBudget(c)) for c in clients))
    grants.sort()
    # 40 calls at 20/s with a burst of 5: no half-second window may hold more than 5 + 10.
    for i, first in enumerate(grants):
        in_window = sum(1 for t in grants[i:] if t - first < 0.5)
        assert in_window <= 15 + 1, (i, in_window)
    assert grants[-1] - started >= (40 - 5) / 20 * 0.9
    for client in clients:
        await client.aclose()


async def test_a_call_needs_every_scope_and_refusal_takes_nothing(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    budget = RateBudget(redis)
    chat_a, chat_b = Scope("test:a", rate=1, burst=1), Scope("test:b", rate=1, burst=1)
    bot = Scope("test:bot", rate=1, burst=2)
    assert await budget.try_take([chat_a, bot]) == 0
    assert await budget.try_take([chat_a, bot]) > 0  # chat a is empty
    assert await budget.try_take([chat_b, bot]) == 0  # the refusal above took nothing from bot
    assert await budget.try_take([chat_b, bot]) > 0
    await redis.aclose()


async def test_retry_after_pauses_the_scope_for_everyone(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    budget, other_worker = RateBudget(redis), RateBudget(Redis.from_url(redis_url))
    scope = Scope("test:flood", rate=100, burst=100)
    await budget.pause(scope, 0.6)
    wait = await other_worker.try_take([scope])
    assert 0.4 < wait <= 0.6
    waited = await other_worker.take([scope])
    assert waited >= 0.4
    assert await other_worker.try_take([scope]) == 0
    await redis.aclose()
