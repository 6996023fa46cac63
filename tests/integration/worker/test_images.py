"""An image sent with a message reaches the model as an image block, through the real worker
and the real SDK, while Redis holds only its reference; the record keeps the reference, so
the image is in the conversation again after Redis lost everything, and a worker that carries
a turn on after another was killed sends it too."""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path

import pytest
from arq.connections import RedisSettings, create_pool
from redis.asyncio import Redis

from bot.files.store import FileStore
from bot.mailbox.inbox import Mailbox
from bot.vocabulary.envelope import Envelope, Sender
from tests.fakes.llm import Reply
from tests.support.images import image_bytes
from tests.support.stack import Stack, idle, read_events, texts
from tests.support.waiting import until

pytestmark = pytest.mark.e2e

SESSION = "test:images"
ANN = Sender(id="test:ann", name="Ann")
# A PNG's signature and 48 KiB that do not compress: were the bytes in Redis, it would show.
PNG = b"\x89PNG\r\n\x1a\n" + os.urandom(48 * 1024)
HOT_STATE_BELOW = 16 * 1024


def images_sent(body: dict[str, object]) -> list[tuple[str, str]]:
    """(media type, base64) of every image block of an Anthropic request's messages."""
    messages = body["messages"]
    assert isinstance(messages, list)
    return [
        (block["source"]["media_type"], block["source"]["data"])
        for message in messages
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "image"
    ]


async def hot_bytes(redis: Redis, session: str) -> int:
    """What Redis holds for the session, in bytes of memory."""
    sizes = [await redis.memory_usage(key) or 0 async for key in redis.scan_iter(f"*{session}*")]
    return sum(sizes)


async def test_an_image_reaches_the_model_and_survives_a_flushall(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="A screenshot."), Reply(text="Still the screenshot."))
    ref = FileStore(Path(stack.env["PARLEY_FILES_DIR"])).put(PNG, "image/png", "shot.png")
    pool = await create_pool(RedisSettings.from_dsn(stack.redis_url))
    mailbox = Mailbox(pool, pool)
    redis = Redis.from_url(stack.redis_url)
    try:
        asked = Envelope(
            id="i1", session=SESSION, text="What's wrong here?", attachments=[ref], sender=ANN
        )
        await mailbox.submit(asked)
        await until(lambda: len(stack.fake.requests) == 1, "the question answered")
        expected = [("image/png", base64.b64encode(PNG).decode())]
        assert images_sent(stack.fake.requests[0].body) == expected
        await idle(stack.redis_url)
        held = await hot_bytes(redis, SESSION)
        assert 0 < held < HOT_STATE_BELOW, f"Redis holds {held} bytes for the session"

        await redis.flushall()
        again = Envelope(id="i2", session=SESSION, text="And now?", sender=ANN)
        await mailbox.submit(again)
        await until(lambda: len(stack.fake.requests) == 2, "the second question answered")
        assert images_sent(stack.fake.requests[1].body) == expected
        print(f"\nRedis held {held} bytes for a session with a {len(PNG)}-byte image")
    finally:
        await redis.aclose()
        await pool.aclose()


async def test_a_photo_s_turn_cut_by_a_sigkill_is_finished_with_the_photo(stack: Stack) -> None:
    """With the defaults: the worker answering a photo is killed mid-reply; the worker that
    carries the turn on sends the model the same photo, once, and the reply lands."""
    first = await stack.start_worker_process()
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(text="A photo of noise, cut off by a crash", chunk_size=4, gate=gate, gate_after=6),
        Reply(text="A photo of noise."),
    )
    png = image_bytes((300, 200), "PNG")
    photo = {"media_type": "image/png", "name": "noise.png", "data": base64.b64encode(png).decode()}
    async with stack.client() as client:
        session = await stack.session(client)
        body = {"text": "what is this?", "attachments": [photo]}
        async with client.stream("POST", f"/api/sessions/{session}/messages", json=body) as reply:
            reading = asyncio.create_task(read_events(reply))
            await until(lambda: len(stack.fake.requests) == 1, "the model called")
            await stack.start_worker_process()  # standing by, as in production
            stack.kill(first)
            events = await asyncio.wait_for(reading, 60)
    gate.set()
    assert texts(events) == "A photo of noise."
    cut, finished = stack.fake.requests
    assert reply.status_code == 200
    sent = [("image/png", base64.b64encode(png).decode())]
    assert images_sent(cut.body) == images_sent(finished.body) == sent
