"""Carrying a turn's events from the session's Redis stream to an HTTP client as SSE.

Clients do not read Redis themselves: the process's `StreamHub` reads every followed stream
over one connection and queues the entries for each client (see `streams.py`). A stream cut
before its end (Redis lost, the server stopping) ends with an `error` event that says so and
names the last event delivered, so the client can resume with `Last-Event-ID`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import weakref

from aiohttp import web
from redis.asyncio import Redis

from adapters.http.streams import INTERRUPTED, Listener, Slot, StreamHub, StreamInterrupted
from bot.redis import keys
from bot.redis.results import done

STREAMS = web.AppKey("streams", weakref.WeakSet[asyncio.Task[object]])
HUB = web.AppKey("stream_hub", StreamHub)
KEEPALIVE_S = 15.0
# A turn that shows nothing for this long has lost its worker and waits for another one.
GIVE_UP_S = 600
RETRY_MS = 2000  # when an EventSource reconnects after a cut stream
CLOSE_WAIT_S = 2.0


async def stream_position(redis: Redis, session: str) -> str:
    """The id of the newest event, taken before submitting so no event of ours is missed."""
    last = await done(redis.xrevrange(keys.events(session), count=1))
    return last[0][0].decode() if last else "0-0"


async def relay(
    request: web.Request,
    slot: Slot,
    session: str,
    envelope_id: str | None,
    since: str,
    headers: dict[str, str] | None = None,
    heard: str = "",
) -> web.StreamResponse:
    """Send the session's events after `since` as SSE, each with its stream id as `id:`.

    With an `envelope_id`, only that turn's events, until it completes; without, every event
    of the session until the client leaves (a client reconnecting sends `Last-Event-ID`).
    `headers` are added to the response's own. `heard`, the transcript of the message's
    recordings, comes first as an event `heard` of its own, with no id (it is no event of
    the session's stream).
    """
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",
            **(headers or {}),
        },
    )
    try:
        await response.prepare(request)
    except ConnectionResetError:  # the client left first; what it sent was taken all the same
        return response
    task = asyncio.current_task()
    if task is not None:
        request.app[STREAMS].add(task)
    with contextlib.suppress(ConnectionResetError, asyncio.CancelledError):
        # The client left, or the server is stopping; the turn goes on without this stream.
        await response.write(f": following {envelope_id or session}\n\n".encode())
        if heard:
            data = json.dumps({"type": "heard", "text": heard})
            await response.write(f"event: heard\ndata: {data}\n\n".encode())
        try:

            def gone() -> bool:
                return request.transport is None

            async with slot.listen(keys.events(session), since, gone) as listener:
                await _follow(response, listener, envelope_id)
        except StreamInterrupted as cut:
            await response.write(interrupted(cut))
    return response


def interrupted(cut: StreamInterrupted) -> bytes:
    """The last event of a cut stream: resume after `last_event_id` (`Last-Event-ID`)."""
    data = json.dumps(
        {
            "type": "error",
            "message": f"{INTERRUPTED}: {cut.reason}",
            "error": INTERRUPTED,
            "reason": cut.reason,
            "retry": True,
            "last_event_id": cut.last,
        }
    )
    return f"id: {cut.last}\nretry: {RETRY_MS}\nevent: error\ndata: {data}\n\n".encode()


async def close_streams(app: web.Application) -> None:
    """On shutdown, end open event streams (each told to resume) instead of waiting them out."""
    await app[HUB].close()
    streams: weakref.WeakSet[asyncio.Task[object]] = app[STREAMS]
    pending = list(streams)
    if pending:
        await asyncio.wait(pending, timeout=CLOSE_WAIT_S)
    for task in pending:
        task.cancel()  # a client that reads nothing is not waited for


async def _follow(
    response: web.StreamResponse, listener: Listener, envelope_id: str | None
) -> None:
    idle = 0.0
    while envelope_id is None or idle < GIVE_UP_S:
        entry = await listener.next(KEEPALIVE_S)
        if entry is None:
            idle += KEEPALIVE_S
            await response.write(b": keep-alive\n\n")
            continue
        idle = 0.0
        position, fields = entry
        if envelope_id is not None and envelope_id not in fields[b"envelopes"].decode().split(","):
            continue
        data = fields[b"event"].decode()
        kind = json.loads(data)["type"]
        await response.write(f"id: {position}\nevent: {kind}\ndata: {data}\n\n".encode())
        if envelope_id is not None and kind == "completed":
            return
