"""An image sent with a message reaches the model as an image block, through the real worker
and the real SDK, while Redis holds only its reference; the record keeps the reference, so
the image is in the conversation again after Redis lost everything."""

from __future__ import annotations

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
from tests.support.stack import Stack, idle
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
