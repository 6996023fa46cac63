"""Carrying a turn's events from the session's Redis stream to an HTTP client as SSE."""

from __future__ import annotations

import asyncio
import contextlib
import json
import weakref

from aiohttp import web
from redis.asyncio import Redis

from adapters.http.egress import events_key
from bot.redis_types import done

STREAMS = web.AppKey("streams", weakref.WeakSet[asyncio.Task[object]])
KEEPALIVE_MS = 15_000
# A turn that shows nothing for this long has lost its worker and waits for another one.
GIVE_UP_S = 600


async def stream_position(redis: Redis, session: str) -> str:
    """The id of the newest event, taken before submitting so no event of ours is missed."""
    last = await done(redis.xrevrange(events_key(session), count=1))
    return last[0][0].decode() if last else "0-0"


async def relay(
    request: web.Request, redis: Redis, session: str, envelope_id: str | None, since: str
) -> web.StreamResponse:
    """Send the session's events after `since` as SSE, each with its stream id as `id:`.

    With an `envelope_id`, only that turn's events, until it completes; without, every event
    of the session until the client leaves (a client reconnecting sends `Last-Event-ID`).
    """
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",
        },
    )
    await response.prepare(request)
    task = asyncio.current_task()
    if task is not None:
        request.app[STREAMS].add(task)
    with contextlib.suppress(ConnectionResetError, asyncio.CancelledError):
        # The client left, or the server is stopping; the turn goes on without this stream.
        await response.write(f": following {envelope_id or session}\n\n".encode())
        await _follow(response, redis, session, envelope_id, since)
    return response


async def close_streams(app: web.Application) -> None:
    """On shutdown, end open event streams instead of waiting out their blocking reads."""
    streams: weakref.WeakSet[asyncio.Task[object]] = app[STREAMS]
    for task in list(streams):
        task.cancel()


async def _follow(
    response: web.StreamResponse, redis: Redis, session: str, envelope_id: str | None, since: str
) -> None:
    position, idle = since, 0.0
    while envelope_id is None or idle < GIVE_UP_S:
        batches = await redis.xread({events_key(session): position}, block=KEEPALIVE_MS)
        if not batches:
            idle += KEEPALIVE_MS / 1000
            await response.write(b": keep-alive\n\n")
            continue
        idle = 0.0
        for entry_id, fields in batches[0][1]:
            position = entry_id.decode()
            if envelope_id is not None and envelope_id not in fields[b"envelopes"].decode().split(
                ","
            ):
                continue
            data = fields[b"event"].decode()
            kind = json.loads(data)["type"]
            await response.write(f"id: {position}\nevent: {kind}\ndata: {data}\n\n".encode())
            if envelope_id is not None and kind == "completed":
                return
