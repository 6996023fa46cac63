"""HTTP replies: the worker appends a turn's events to the session's Redis stream, and the
web process that holds the client's request reads them from there.

Text deltas are coalesced for up to `COALESCE_S` before they are written: a model streams
dozens of tiny deltas a second, and one stream entry per delta would make Redis and the
worker, not the model, the limit when hundreds of replies stream at once.

A file a tool sent (`FileSent`) is written with its address on the API (`url`,
`/api/files/{sha256}`), and counted as sent: the client shows or downloads it from there, so
the model is told it was sent. A helper's stream is the exception: its parent passes its
files on to the parent's chat later, where they may still be refused, so the helper's model
is told only that they were handed on. A request for approval carries, with each call, its
arguments as the chat platforms' prompts show them (`shown`, `adapters.chat.approvals`: a
program as the text it is, the rest as JSON), so the web chat's card and any client show
what Telegram shows, decided in one place.
As on the chat platforms, the files a turn's stream carried are kept in Redis by their
SHA-256 under its first envelope (`adapters.chat.replies`), so a turn resumed after a crash
does not show one twice.

The stream is for following turns as they happen and resuming a cut one, not a record (SQL
keeps that): it keeps the last `RETAIN_S` of events. A turn's first write trims what is older
and every write keeps the whole stream alive that long, so a session's Redis memory is bounded
by its recent traffic, not by its conversation's length, and an idle session's stream lapses.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import time
from collections.abc import Sequence

from redis.asyncio import Redis
from redis.asyncio.client import Pipeline

from adapters.chat.approvals import shown_arguments
from adapters.chat.replies import ReplyStore
from bot.redis import keys
from bot.redis.confirmations import Confirmation
from bot.telemetry import metrics
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.events import (
    AgentEvent,
    ConfirmationRequired,
    FileSent,
    Joined,
    ModelAnswered,
    Reminded,
    TextDelta,
)
from bot.vocabulary.helpers import is_helper

STREAM_LENGTH = 2000
# Longer than an approval waits by default (10 minutes) and a turn runs (3), so a client that
# resumes from a turn's start or its approval prompt finds every event after it.
RETAIN_S = 900.0
COALESCE_S = 0.05
SHOWN_LIMIT = 20_000  # characters of one call's arguments shown on a card: a page scrolls


class RedisEventStream:
    def __init__(
        self, redis: Redis, envelopes: Sequence[Envelope], retain: float = RETAIN_S
    ) -> None:
        self.redis = redis
        self.key = envelopes[0].id
        self.helper = is_helper(envelopes[0].session)  # its files are passed on (see above)
        self.files = ReplyStore(redis, "http")
        self.name = keys.events(envelopes[0].session)
        self.ids = ",".join(envelope.id for envelope in envelopes)
        self.retain = retain
        self._text: list[str] = []
        self._flush: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._trimmed = False
        self._expiry_renewed_at = -math.inf

    async def send(self, event: AgentEvent) -> None:
        if isinstance(event, ModelAnswered):  # for the trace and a chat's pump, not the API
            return
        if isinstance(event, TextDelta):
            self._text.append(event.text)
            if self._flush is None or self._flush.done():
                self._flush = asyncio.create_task(self._flush_soon())
            return
        if isinstance(event, FileSent):
            await self._file(event)
            return
        if isinstance(event, Joined):  # what follows answers them too: their streams see it
            await self._write([])
            self.ids = ",".join([self.ids, *event.envelope_ids])
        await self._write([event])

    async def post_file(self, event: FileSent) -> str | None:
        await self._file(event)
        return None if self.helper else ""

    async def _file(self, event: FileSent) -> None:
        """The file's event, once a turn however often it is resumed; counted when written."""
        sha256 = event.file.sha256
        if await self.files.file_posted(self.key, sha256):
            return
        await self._write([event])
        await self.files.save_file(self.key, sha256, True)
        if event.voice_seconds is None:
            kind = "image" if event.file.is_image else "document"
            metrics.FILES_SENT.labels("http", kind).inc()

    async def settle(self) -> None:
        await self._write([])  # the text held for coalescing, written now

    async def close(self, *, abandoned: bool = False) -> None:
        if abandoned:  # the worker carrying the turn on writes it, after a reset
            if self._flush is not None:
                self._flush.cancel()
            self._text.clear()
            return
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
                    {"envelopes": self.ids, "event": encoded(event)},
                    maxlen=STREAM_LENGTH,
                    approximate=True,
                )
            self._keep(pipe)
            await pipe.execute()

    def _keep(self, pipe: Pipeline) -> None:
        """Trim events older than `retain` once per turn; renew the stream's expiry whenever
        half of it has passed (a long turn must not lose its stream mid-way)."""
        if not self._trimmed:
            oldest = int((time.time() - self.retain) * 1000)
            pipe.xtrim(self.name, minid=f"{oldest}-0", approximate=False)
            self._trimmed = True
        now = time.monotonic()
        if now - self._expiry_renewed_at > self.retain / 2:
            pipe.expire(self.name, math.ceil(self.retain))
            self._expiry_renewed_at = now


def encoded(event: AgentEvent) -> str:
    """The event's JSON on the stream; a file's with where the API serves it, a request's
    calls with their arguments as a person reads them."""
    if isinstance(event, FileSent):
        return json.dumps(event.model_dump(mode="json") | {"url": file_url(event.file.sha256)})
    if isinstance(event, ConfirmationRequired):
        data = event.model_dump(mode="json")
        for call, pending in zip(data["calls"], event.calls, strict=True):
            blocks = shown_arguments(pending.arguments, SHOWN_LIMIT)
            call["shown"] = [dataclasses.asdict(block) for block in blocks]
        return json.dumps(data)
    return event.model_dump_json()


def file_url(sha256: str) -> str:
    return f"/api/files/{sha256}"


class HttpEgress:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis

    def open(self, envelopes: Sequence[Envelope], *, fresh: bool = False) -> RedisEventStream:
        return RedisEventStream(self.redis, envelopes)  # it keeps no messages to look up

    async def expired(self, confirmation: Confirmation) -> None:
        """The web chat learns of an expiry from the turn that follows it."""

    async def remind(self, confirmation: Confirmation) -> None:
        """A `reminder` event on the session's stream, as part of the turn that asked (the
        web chat marks the card; an API client following the session sees it)."""
        event = Reminded(confirmation_id=confirmation.id, expires_at=confirmation.expires_at)
        name = keys.events(confirmation.session)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.xadd(
                name,
                {"envelopes": confirmation.envelope_id, "event": encoded(event)},
                maxlen=STREAM_LENGTH,
                approximate=True,
            )
            pipe.expire(name, math.ceil(RETAIN_S))
            await pipe.execute()

    async def aclose(self) -> None:
        """The Redis connection belongs to the worker."""
