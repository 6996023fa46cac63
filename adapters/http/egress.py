"""HTTP replies: the worker appends a turn's events to the session's Redis stream, and the
web process that holds the client's request reads them from there.

Text deltas are coalesced for up to `COALESCE_S` before they are written: a model streams
dozens of tiny deltas a second, and one stream entry per delta would make Redis and the
worker, not the model, the limit when hundreds of replies stream at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from redis.asyncio import Redis

from bot import keys
from bot.agent.events import AgentEvent, TextDelta
from bot.confirmations import Confirmation
from bot.envelope import Envelope

STREAM_LENGTH = 2000
STREAM_TTL = 86_400
COALESCE_S = 0.05


class RedisEventStream:
    def __init__(self, redis: Redis, envelopes: Sequence[Envelope]) -> None:
        self.redis = redis
        self.name = keys.events(envelopes[0].session)
        self.ids = ",".join(envelope.id for envelope in envelopes)
        self._text: list[str] = []
        self._flush: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._expiry_set = False

    async def send(self, event: AgentEvent) -> None:
        if isinstance(event, TextDelta):
            self._text.append(event.text)
            if self._flush is None or self._flush.done():
                self._flush = asyncio.create_task(self._flush_soon())
            return
        await self._write([event])

    async def close(self) -> None:
        await self._write([])

    async def _flush_soon(self) -> None:
        """Text waits at most COALESCE_S, also when the model stalls after a delta."""
        await asyncio.sleep(COALESCE_S)
        await self._write([])

    async def _write(self, events: list[AgentEvent]) -> None:
        async with self._lock:
            await self._write_locked(events)

    async def _write_locked(self, events: list[AgentEvent]) -> None:
        if self._text:
            events.insert(0, TextDelta(text="".join(self._text)))
            self._text.clear()
        if not events:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for event in events:
                pipe.xadd(
                    self.name,
                    {"envelopes": self.ids, "event": event.model_dump_json()},
                    maxlen=STREAM_LENGTH,
                    approximate=True,
                )
            if not self._expiry_set:
                pipe.expire(self.name, STREAM_TTL)
                self._expiry_set = True
            await pipe.execute()


class HttpEgress:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    def open(self, envelopes: Sequence[Envelope]) -> RedisEventStream:
        return RedisEventStream(self.redis, envelopes)

    async def expired(self, confirmation: Confirmation) -> None:
        """The web chat learns of an expiry from the turn that follows it."""

    async def aclose(self) -> None:
        """The Redis connection belongs to the worker."""
