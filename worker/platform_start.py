"""When a worker's platforms begin to load: once its first turns have sent their model requests.

A platform's SDK is imported in a thread while the worker already takes work
(`adapters.platforms.loading`), but a thread shares the interpreter's lock: begun at start,
aiogram's import (half a second of CPU) took half of it from the turns being set up, so the
first model request went out later by about what it took meanwhile. Begun once the requests
are out, the import runs while the model thinks, which a real model does for longer than the
import takes.

So a worker with messages waiting at its start lets its platforms begin at its first model
request (`FirstCall` tells it), or after `WITHIN_S` at the latest (the sessions waiting may
be another worker's); one with none waiting lets them begin at once. Whatever has to be
shown before then begins the load itself (see `adapters.platforms.loading`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from redis.asyncio import Redis
from redis.exceptions import RedisError

from bot.llm.base import ModelRequest, Provider
from bot.llm.events import ProviderEvent
from bot.redis import keys

WITHIN_S = 1.0  # the latest the load begins after start-up while messages wait


class FirstCall:
    """A `Provider` that says when its first request is made (`called`)."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self.name = provider.name
        self.called = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        self.called.set()
        async for event in self.provider.stream(request):
            yield event

    async def aclose(self) -> None:
        await self.provider.aclose()


async def begin_platforms(redis: Redis, begin: asyncio.Event, called: asyncio.Event) -> None:
    """Set `begin` once `called` is, or at once if no message waits (see the docstring)."""
    try:
        waiting = bool(await redis.zcard(keys.ARMED_SET))
    except RedisError:  # the worker starts over without Redis; nothing is kept waiting
        waiting = False
    if waiting:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(called.wait(), WITHIN_S)
    begin.set()
