"""Sensitive tools wait for a press of Approve: through the HTTP API and a worker process."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from bot.redis.confirmations import CallSummary, Confirmations
from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.stack import Stack, read_events, send, texts
from tests.support.waiting import until

LAUNCH = ToolCallSpec("launch", {"target": "rocket"})


async def ask(stack: Stack, client: httpx.AsyncClient) -> tuple[str, dict[str, Any]]:
    stack.fake.enqueue(Reply(tool_calls=[LAUNCH]))
    session = await stack.session(client)
    events = await send(client, session, "launch the rocket")
    (asked,) = [e for e in events if e["type"] == "confirmation_required"]
    assert events[-1]["finish_reason"] == "awaiting_confirmation"
    assert asked["calls"][0]["name"] == "launch"
    assert asked["calls"][0]["arguments"] == {"target": "rocket"}
    return session, asked


async def decide(
    client: httpx.AsyncClient, confirmation_id: str, decision: str
) -> list[dict[str, Any]]:
    async with client.stream(
        "POST",
        f"/api/confirmations/{confirmation_id}",
        json={"decision": decision},
        headers={"Accept": "text/event-stream"},
    ) as response:
        assert response.status_code == 200, await response.aread()
        return await read_events(response)


async def test_approve_runs_the_tool_and_the_turn_goes_on(stack: Stack) -> None:
    await stack.start_worker()
    async with stack.client() as client:
        _, asked = await ask(stack, client)
        stack.fake.enqueue(Reply(text="Launched."))
        events = await decide(client, asked["confirmation_id"], "approve")
        again = await client.post(
            f"/api/confirmations/{asked['confirmation_id']}", json={"decision": "deny"}
        )
    results = [e for e in events if e["type"] == "tool_call_result"]
    assert [r["content"] for r in results] == ["launched rocket"]
    assert texts(events) == "Launched."
    assert again.status_code == 409 and again.json()["status"] == "approved"
    assert stack.fake.requests[1].tool_results()[0][1] == "launched rocket"


async def test_deny_tells_the_model(stack: Stack) -> None:
    await stack.start_worker()
    async with stack.client() as client:
        _, asked = await ask(stack, client)
        stack.fake.enqueue(Reply(text="Not launched."))
        events = await decide(client, asked["confirmation_id"], "deny")
    assert texts(events) == "Not launched."
    assert stack.fake.requests[1].tool_results()[0][1] == "Denied by the user."


@pytest.mark.parametrize("stack", [{"PARLEY_CONFIRMATION_TTL": "5"}], indirect=True)
async def test_an_expiry_tells_the_model_no_decision_and_a_late_press_changes_nothing(
    stack: Stack,
) -> None:
    await stack.start_worker()
    async with stack.client() as client:
        _, asked = await ask(stack, client)
        stack.fake.enqueue(Reply(text="It expired."))
        await until(lambda: len(stack.fake.requests) == 2, "the expiry told to the model")
        late = await client.post(
            f"/api/confirmations/{asked['confirmation_id']}", json={"decision": "approve"}
        )
    assert late.status_code in (409, 410)
    assert late.json()["status"] == "expired"
    result = stack.fake.requests[1].tool_results()[0][1]
    assert result.startswith("Not run: no decision was made before the request expired")
    assert "Denied by the user" not in result


async def test_new_message_instead_of_a_press_declines(stack: Stack) -> None:
    await stack.start_worker()
    async with stack.client() as client:
        session, asked = await ask(stack, client)
        stack.fake.enqueue(Reply(text="OK, something else then."))
        events = await send(client, session, "never mind")
        late = await client.post(
            f"/api/confirmations/{asked['confirmation_id']}", json={"decision": "approve"}
        )
    assert texts(events) == "OK, something else then."
    results = stack.fake.requests[1].tool_results()
    assert results[0][1] == "Not run: the user sent a new message instead of deciding."
    assert late.status_code == 409 and late.json()["status"] == "declined"


async def test_only_the_requester_or_an_admin_decides(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    confirmations = Confirmations(redis)
    calls = [CallSummary(call_id="c1", name="launch", arguments={})]
    record = await confirmations.create("tg:1", "e1", "tg:alice", calls, ttl=60)
    assert await confirmations.decide(record.id, "approved", "tg:mallory") == "forbidden"
    assert (await confirmations.get(record.id)).status == "pending"  # type: ignore[union-attr]
    assert await confirmations.decide(record.id, "denied", "tg:boss", is_admin=True) == "ok"
    assert await confirmations.decide(record.id, "approved", "tg:alice") == "decided"
    assert await confirmations.decide("no-such-id", "approved", "tg:alice") == "unknown"
    short = await confirmations.create("tg:1", "e2", "tg:alice", calls, ttl=0.2)
    await asyncio.sleep(0.3)
    assert await confirmations.decide(short.id, "approved", "tg:alice") == "expired"
    assert await confirmations.decide(short.id, "expired", "timeout") == "ok"
    await redis.aclose()
