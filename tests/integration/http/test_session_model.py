"""An HTTP session may be created with a model of its own; the default is PARLEY_MODEL."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.redis import keys
from tests.fakes.llm import Reply
from tests.support.stack import Stack, send, texts

pytestmark = pytest.mark.e2e


async def test_a_session_made_with_a_model_is_answered_by_it(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="Hello from the other model."), Reply(text="And the default."))
    async with stack.client() as client:
        made = await client.post("/api/sessions", json={"model": "claude-haiku-test"})
        assert made.status_code == 201 and made.json()["model"] == "claude-haiku-test"
        events = await send(client, made.json()["id"], "hi")
        plain = await client.post("/api/sessions")
        assert plain.status_code == 201 and plain.json()["model"] == "claude-test"
        await send(client, plain.json()["id"], "hi")
    assert texts(events) == "Hello from the other model."
    assert [r.body["model"] for r in stack.fake.requests] == ["claude-haiku-test", "claude-test"]


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"model": "gpt-4o"}, "model: this deployment's API does not serve 'gpt-4o'"),
        ({"model": ""}, "model: String should have at least 1 character"),
        ({"model": "claude-x", "temperature": 2}, "temperature: Extra inputs are not permitted"),
        ([1], "body: Input should be a valid dictionary or instance of SessionIn"),
    ],
)
async def test_a_model_this_deployment_cannot_serve_is_refused_and_makes_nothing(
    stack: Stack, body: object, problem: str
) -> None:
    async with stack.client() as client:
        response = await client.post("/api/sessions", json=body)
    assert response.status_code == 422
    assert problem in response.json()["problems"]
    redis = Redis.from_url(stack.redis_url)
    try:
        assert await redis.keys(keys.http_session("*")) == []
        assert await redis.keys("*options*") == []
    finally:
        await redis.aclose()
