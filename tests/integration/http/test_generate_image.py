"""`generate_image` over the HTTP API, end to end: the real web app and worker, Redis, the fake
model calling the tool and the fake images endpoint answering through the real `openai` SDK.
The picture comes as a `file` event after the call's result, `GET /api/files/{sha256}` serves
it, the person's day counts the tokens it cost, and `/api/tools` lists the tool only where
PARLEY_IMAGE_MODEL is set."""

from __future__ import annotations

import hashlib
import io

import pytest
from PIL import Image
from redis.asyncio import Redis

from adapters.http.place import LOCAL
from bot.people.limits import Limits
from tests.fakes.llm import OPENAI_KEY, Reply, ToolCallSpec
from tests.support.stack import Stack, env_settings, send, texts
from tests.support.waiting import until

pytestmark = pytest.mark.e2e


async def _charged(limits: Limits, tokens: int) -> bool:
    return await limits.tokens_used(LOCAL) == tokens


async def listed(stack: Stack) -> set[str]:
    async with stack.client() as client:
        answer = await client.get("/api/tools")
    assert answer.status_code == 200
    return {tool["name"] for tool in answer.json()["tools"]}


@pytest.mark.parametrize("stack", [{"images": "1"}], indirect=True)
async def test_a_picture_is_a_file_event_served_by_its_address_and_counted(stack: Stack) -> None:
    await stack.start_worker()
    draw = ToolCallSpec("generate_image", {"prompt": "A lighthouse at dusk"}, id="c1")
    stack.fake.enqueue(Reply(tool_calls=[draw]), Reply(text="Your lighthouse."))
    async with stack.client() as client:
        events = await send(client, await stack.session(client), "draw a lighthouse")
        [file] = [event for event in events if event["type"] == "file"]
        served = await client.get(file["url"])
    kinds = [event["type"] for event in events]
    assert kinds.index("file") == kinds.index("tool_call_result") + 1
    [result] = [event for event in events if event["type"] == "tool_call_result"]
    assert not result["is_error"]
    assert result["content"].startswith("Made a picture with gpt-image-1: 1024x1024 PNG.")
    assert (file["file"]["media_type"], file["file"]["name"]) == ("image/png", "image.png")
    assert file["url"] == f"/api/files/{file['file']['sha256']}"
    assert (served.status_code, served.headers["content-type"]) == (200, "image/png")
    assert hashlib.sha256(served.content).hexdigest() == file["file"]["sha256"]
    with Image.open(io.BytesIO(served.content)) as picture:
        assert (picture.format, picture.size) == ("PNG", (1024, 1024))
    assert texts(events) == "Your lighthouse."
    [asked] = stack.fake.images.requests
    assert asked.fields["prompt"] == "A lighthouse at dusk"
    [completed] = [event for event in events if event["type"] == "completed"]
    assert completed["usage"]["output_tokens"] > 1056  # the picture's and the model's
    usage = completed["usage"]
    turn = sum(usage[k] for k in ("input_tokens", "cache_read_tokens", "cache_write_tokens",
                                  "output_tokens"))  # fmt: skip
    redis = Redis.from_url(stack.redis_url)
    limits = Limits(redis, env_settings(stack.env))
    try:  # charged once the turn is recorded
        await until(lambda: _charged(limits, turn), f"{turn} tokens charged to {LOCAL}")
    finally:
        await redis.aclose()
    assert "generate_image" in await listed(stack)
    assert OPENAI_KEY not in str(events)


async def test_without_a_model_the_tool_is_neither_listed_nor_offered(stack: Stack) -> None:
    """With the defaults."""
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="ok"))
    async with stack.client() as client:
        await send(client, await stack.session(client), "hi")
    assert "generate_image" not in await listed(stack)
    assert "generate_image" not in {t["name"] for t in stack.fake.requests[-1].body["tools"]}
