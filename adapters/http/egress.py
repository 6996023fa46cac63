"""HTTP replies: the worker appends a turn's events to the session's Redis stream, and the
web process that holds the client's request reads them from there."""

from __future__ import annotations

from collections.abc import Sequence

from redis.asyncio import Redis

from bot.agent.events import AgentEvent
from bot.envelope import Envelope
from bot.mailbox import key

STREAM_LENGTH = 2000
STREAM_TTL = 86_400


def events_key(session: str) -> str:
    return key(session, "events")


class RedisEventStream:
    def __init__(self, redis: Redis, envelopes: Sequence[Envelope]) -> None:
        self.redis = redis
        self.session = envelopes[0].session
        self.ids = ",".join(envelope.id for envelope in envelopes)

    async def send(self, event: AgentEvent) -> None:
        name = events_key(self.session)
        await self.redis.xadd(
            name,
            {"envelopes": self.ids, "event": event.model_dump_json()},
            maxlen=STREAM_LENGTH,
            approximate=True,
        )
        await self.redis.expire(name, STREAM_TTL)

    async def close(self) -> None:
        return None


class HttpEgress:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    def open(self, envelopes: Sequence[Envelope]) -> RedisEventStream:
        return RedisEventStream(self.redis, envelopes)
