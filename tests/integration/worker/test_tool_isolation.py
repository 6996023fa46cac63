"""No tool stalls a worker: with a tool blocked for good, the worker keeps every promise.

A real worker process loads `tests.support.tools` through PARLEY_TOOL_MODULES, as an operator
would load their own tools, and the fake model calls a tool that blocks its thread for ever.
The turn must end with a timeout result at PARLEY_TOOL_TIMEOUT, the session's lease must stay
held by that turn (the heartbeat renews it: its TTL is 3 s here), and another session on the
same worker must get its answer meanwhile.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.redis import keys
from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec
from tests.support.stack import Stack, read_events, send, texts
from tests.support.waiting import WITHIN, until

RUNAWAY = "round(1, -10**1000)"


def brain(blocker: str) -> Any:
    """Session A asks for the blocking tool, session B for a runaway calculation."""

    def answer(request: RecordedRequest) -> Reply:
        said = str(request.body["messages"])
        if request.tool_results():
            return Reply(text="the tool gave up" if "block" in said else "calculator answered")
        if "block" in request.last_user_text():
            return Reply(tool_calls=[ToolCallSpec(blocker, {})])
        return Reply(tool_calls=[ToolCallSpec("calculator", {"expression": RUNAWAY})])

    return answer


@pytest.mark.slow  # waits out tool timeouts, the default 30 s among them
@pytest.mark.parametrize(
    ("stack", "blocker", "limit"),
    [
        ({}, "block_thread", 30.0),  # the default PARLEY_TOOL_TIMEOUT
        ({"PARLEY_TOOL_TIMEOUT": "8"}, "block_in_async", 8.0),
    ],
    indirect=["stack"],
    ids=["sync-default-timeout", "async-8s"],
)
async def test_a_tool_blocked_for_good_stalls_nothing(
    stack: Stack, blocker: str, limit: float
) -> None:
    worker = await stack.start_worker_process()
    stack.fake.responder = brain(blocker)
    redis = Redis.from_url(stack.redis_url, decode_responses=True)
    started = asyncio.Event()
    events_a: list[dict[str, Any]] = []

    async def on_event(event: dict[str, Any]) -> None:
        events_a.append(event)
        if event["type"] == "tool_call_start":
            started.set()

    async with stack.client() as client:
        a, b = await stack.session(client), await stack.session(client)
        lease = keys.session(f"http:{a}", "lease")
        async with client.stream(
            "POST", f"/api/sessions/{a}/messages", json={"text": "please block"}
        ) as response:
            reading = asyncio.create_task(read_events(response, on_event))
            await asyncio.wait_for(started.wait(), 30)
            tool_started = time.monotonic()
            token = await redis.get(lease)
            assert token

            asked = time.monotonic()
            events_b = await asyncio.wait_for(send(client, b, "please calculate"), limit)
            answered_b = time.monotonic() - asked

            tokens: list[str | None] = []

            async def answered() -> bool:
                if any(e["type"] == "tool_call_result" for e in events_a):
                    return True
                tokens.append(await redis.get(lease))  # the whole time the tool runs
                return False

            await until(answered, "the tool's result", within=limit + WITHIN, every=0.2)
            await asyncio.wait_for(reading, 30)
    ended = time.monotonic() - tool_started
    await redis.aclose()

    print(
        f"\n{blocker}: the turn ended {ended:.1f} s after the tool started "
        f"(PARLEY_TOOL_TIMEOUT {limit:g} s, lease TTL 3 s); the other session was answered "
        f"in {answered_b:.2f} s meanwhile"
    )
    (result,) = [e for e in events_a if e["type"] == "tool_call_result"]
    assert result["is_error"]
    assert result["content"] == f"{blocker} timed out after {limit:g} s and was stopped."
    assert limit <= result["duration"] < limit + 5
    assert texts(events_a) == "the tool gave up"
    assert set(tokens) == {token}  # held by the same turn all along: renewed, never lost
    assert len(tokens) > 10
    assert [e for e in events_a if e["type"] == "reset"] == []  # never taken over

    (calculated,) = [e for e in events_b if e["type"] == "tool_call_result"]
    assert calculated["is_error"] and calculated["content"] == (
        f"Cannot evaluate {RUNAWAY!r}: round's digits must be a whole number from -4300 to 4300"
    )
    assert texts(events_b) == "calculator answered"
    assert worker.returncode is None and len(stack.workers) == 1
    assert stack.fake.rejected == []
