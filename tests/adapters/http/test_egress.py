"""The HTTP reply stream coalesces text but never holds it back for long, and keeps order."""

from __future__ import annotations

import asyncio
import json
import time

from redis.asyncio import Redis

from adapters.http.egress import RETAIN_S, HttpEgress
from bot.redis import keys
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.files import FileRef


async def entries(redis: Redis, session: str) -> list[dict[str, object]]:
    raw = await redis.xrange(keys.events(session))
    return [json.loads(fields[b"event"]) for _, fields in raw]


async def test_deltas_are_merged_flushed_on_a_stall_and_kept_in_order(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    head = Envelope(id="e1", session="test:eg", text="hi", sender=Sender(id="test:u"))
    stream = HttpEgress(redis).open([head])
    for piece in ["Hel", "lo", ", wor", "ld"]:
        await stream.send(ev.TextDelta(text=piece))
    assert await entries(redis, "test:eg") == []  # still being coalesced
    await asyncio.sleep(0.15)  # the model stalls: the text must not wait for the next event
    assert await entries(redis, "test:eg") == [{"type": "text_delta", "text": "Hello, world"}]
    await stream.send(ev.TextDelta(text="!"))
    await stream.send(ev.Iteration(number=2))  # other events go out at once, after the text
    await stream.close()
    kinds = [(e["type"], e.get("text")) for e in await entries(redis, "test:eg")]
    assert kinds == [("text_delta", "Hello, world"), ("text_delta", "!"), ("iteration", None)]
    fields = (await redis.xrange(keys.events("test:eg")))[0][1]
    assert fields[b"envelopes"] == b"e1"
    assert 0 < await redis.ttl(keys.events("test:eg")) <= 86_400
    await redis.aclose()


async def test_a_turn_drops_the_sessions_events_older_than_the_window_and_the_stream_lapses(
    redis_url: str,
) -> None:
    """A long conversation must not keep every turn's events in Redis: what a turn finds
    older than RETAIN_S goes, what is newer stays for a client resuming, and the stream
    expires once the session is idle that long."""
    redis = Redis.from_url(redis_url)
    name = keys.events("test:long")
    now_ms = int(time.time() * 1000)
    for n in range(50):  # an hour ago, without an expiry
        await redis.xadd(name, {"envelopes": "old", "event": "{}"}, id=f"{now_ms - 3_600_000 + n}")
    await redis.xadd(name, {"envelopes": "recent", "event": "{}"}, id=f"{now_ms - 60_000}")
    head = Envelope(id="new", session="test:long", text="hi", sender=Sender(id="test:u"))
    stream = HttpEgress(redis).open([head])
    await stream.send(ev.Iteration(number=1))
    await stream.close()
    left = [fields[b"envelopes"] for _, fields in await redis.xrange(name)]
    assert left == [b"recent", b"new"]
    assert 0 < await redis.ttl(name) <= RETAIN_S
    await redis.aclose()


async def test_a_file_is_written_with_its_address_once_however_often_the_turn_runs(
    redis_url: str,
) -> None:
    redis = Redis.from_url(redis_url)
    head = Envelope(id="e-files", session="test:files", text="hi", sender=Sender(id="test:u"))
    chart = FileRef(sha256="c" * 64, media_type="image/png", name="chart.png", size=10)
    first = HttpEgress(redis).open([head])
    await first.send(ev.TextDelta(text="Drawn:"))
    await first.send(ev.FileSent(call_id="a", file=chart))
    await first.close(abandoned=True)  # the worker stopped here
    again = HttpEgress(redis).open([head])  # and the turn runs again elsewhere
    await again.send(ev.FileSent(call_id="b", file=chart))
    await again.close()
    written = await entries(redis, "test:files")
    assert [e["type"] for e in written] == ["text_delta", "file"]
    assert written[1]["url"] == f"/api/files/{'c' * 64}"
    assert written[1]["file"] == chart.model_dump(mode="json")
    await redis.aclose()
