"""Messages through the real stack: HTTP API → Redis → a worker process → SSE back."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import SecretStr
from redis.asyncio import Redis

from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.stack import Stack, send, texts, web_settings


async def test_reply_streams_back_over_sse(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "12*12"})]),
        Reply(text="It is 144.", chunk_size=3),
    )
    async with stack.client() as client:
        session = await stack.session(client)
        events = await send(client, session, "what is 12*12?")
    kinds = [e["type"] for e in events if e["type"] != "state"]
    assert kinds[:3] == ["iteration", "tool_call_start", "tool_call_result"]
    assert kinds[-1] == "completed"
    assert texts(events) == "It is 144."
    assert any(e["type"] == "text_delta" for e in events)
    assert stack.fake.rejected == []


async def test_context_carries_over_between_messages(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="Hi Ann."), Reply(text="You are Ann."))
    async with stack.client() as client:
        session = await stack.session(client)
        await send(client, session, "I am Ann")
        await send(client, session, "who am I?")
    assert "I am Ann" in str(stack.fake.requests[1].body["messages"])
    assert "Hi Ann." in str(stack.fake.requests[1].body["messages"])


async def test_duplicate_message_id_is_answered_once(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.responder = lambda _: Reply(text="once")
    async with stack.client() as client:
        session = await stack.session(client)
        first = await send(client, session, "hello", **{"Idempotency-Key": "m-1"})
        again = await client.post(
            f"/api/sessions/{session}/messages",
            json={"text": "hello"},
            headers={"Idempotency-Key": "m-1"},
        )
    assert texts(first) == "once"
    assert again.status_code == 409 and again.json()["error"] == "this message was already received"
    await asyncio.sleep(0.5)
    assert len(stack.fake.requests) == 1


@pytest.mark.parametrize(
    ("path", "body", "status", "message"),
    [
        ("/api/sessions/nosuch/messages", {"text": "hi"}, 404, "unknown session"),
        ("/api/sessions/{s}/messages", "not json", 400, "the body is not valid JSON"),
        ("/api/sessions/{s}/messages", {"txt": "hi"}, 422, "invalid request"),
        ("/api/sessions/{s}/messages", {"text": ""}, 422, "invalid request"),
        ("/api/sessions/{s}/messages", {"text": "x" * 100_000}, 422, "invalid request"),
        ("/api/confirmations/nope", {"decision": "approve"}, 404, "unknown confirmation"),
        ("/api/confirmations/nope", {"decision": "maybe"}, 422, "invalid request"),
    ],
)
async def test_bad_input_gets_a_clear_4xx_and_enqueues_nothing(
    stack: Stack, path: str, body: object, status: int, message: str
) -> None:
    async with stack.client() as client:
        session = await stack.session(client)
        url = path.replace("{s}", session)
        if isinstance(body, str):
            response = await client.post(url, content=body)
        else:
            response = await client.post(url, json=body)
    assert response.status_code == status
    assert response.json()["error"].startswith(message)
    client_redis = Redis.from_url(stack.redis_url)
    assert await client_redis.keys("parley:{*}:inbox") == []
    assert await client_redis.zcard("arq:queue") == 0
    await client_redis.aclose()


async def test_token_auth(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    from aiohttp import web

    from tests.support.redis_server import free_port
    from worker.web import make_app

    settings = web_settings(stack.env).model_copy(update={"api_token": SecretStr("s3cret-token")})
    app = await make_app(settings)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        import httpx

        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            assert (await client.post("/api/sessions")).status_code == 401
            wrong = await client.post("/api/sessions", headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401
            ok = await client.post(
                "/api/sessions", headers={"Authorization": "Bearer s3cret-token"}
            )
            assert ok.status_code == 201
            assert (await client.get("/healthz")).json() == {"status": "ok"}
    finally:
        await runner.cleanup()


async def follow(client: Any, session: str, until: int, **headers: str) -> list[tuple[str, str]]:
    """(id, type) of the session's events until `until` `completed` events were seen."""
    seen: list[tuple[str, str]] = []
    event_id = ""
    async with client.stream("GET", f"/api/sessions/{session}/events", headers=headers) as resp:
        assert resp.status_code == 200
        async for line in resp.aiter_lines():
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: "):
                seen.append((event_id, json.loads(line[6:])["type"]))
                if sum(kind == "completed" for _, kind in seen) == until:
                    return seen
    return seen


async def test_session_event_stream_follows_and_resumes(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="first"), Reply(text="second"))
    async with stack.client() as client:
        session = await stack.session(client)
        following = asyncio.create_task(follow(client, session, until=2))
        await asyncio.sleep(0.3)
        await send(client, session, "one")
        await send(client, session, "two")
        seen = await asyncio.wait_for(following, 20)
        first_done = next(i for i, (_, kind) in enumerate(seen) if kind == "completed")
        resumed = await asyncio.wait_for(
            follow(client, session, until=1, **{"Last-Event-ID": seen[first_done][0]}), 20
        )
    assert [kind for _, kind in seen].count("text_delta") >= 2
    assert resumed == seen[first_done + 1 :]  # exactly what came after that event
