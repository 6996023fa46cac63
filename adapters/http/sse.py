"""Carrying a turn's events from the session's Redis stream to an HTTP client as SSE."""

from __future__ import annotations

import json

from aiohttp import web
from redis.asyncio import Redis

from adapters.http.egress import events_key
from bot.redis_types import done

KEEPALIVE_MS = 15_000
# A turn that shows nothing for this long has lost its worker and waits for another one.
GIVE_UP_S = 600


async def stream_position(redis: Redis, session: str) -> str:
    """The id of the newest event, taken before submitting so no event of ours is missed."""
    last = await done(redis.xrevrange(events_key(session), count=1))
    return last[0][0].decode() if last else "0-0"


async def relay(
    request: web.Request, redis: Redis, session: str, envelope_id: str, since: str
) -> web.StreamResponse:
    """Send the events of `envelope_id`'s turn until it completes (or the client leaves)."""
    try:
        return await _relay(request, redis, session, envelope_id, since)
    except ConnectionResetError:
        return web.Response(status=499)  # the client left; the turn goes on without it


async def _relay(
    request: web.Request, redis: Redis, session: str, envelope_id: str, since: str
) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",
        },
    )
    await response.prepare(request)
    await response.write(f": accepted {envelope_id}\n\n".encode())
    position, idle = since, 0.0
    while idle < GIVE_UP_S:
        batches = await redis.xread({events_key(session): position}, block=KEEPALIVE_MS)
        if not batches:
            idle += KEEPALIVE_MS / 1000
            await response.write(b": keep-alive\n\n")
            continue
        idle = 0.0
        for entry_id, fields in batches[0][1]:
            position = entry_id.decode()
            if envelope_id not in fields[b"envelopes"].decode().split(","):
                continue
            data = fields[b"event"].decode()
            kind = json.loads(data)["type"]
            await response.write(f"event: {kind}\ndata: {data}\n\n".encode())
            if kind == "completed":
                return response
    return response
