"""What the API and the dashboard's numbers say about runs that did not end in an answer: a
doom loop, a timeout, a stop and a step cap each have their own status, and only the run that
answered counts as a success. A real web process and worker, the fake model behind the SDK."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.fakes.llm import Reply, ToolCallSpec
from tests.integration.http.test_agent_run import asked
from tests.support.stack import Stack
from tests.support.waiting import until

SUM = ToolCallSpec("calculator", {"expression": "1+1"})


async def run(client: httpx.AsyncClient, task: str, **config: Any) -> dict[str, Any]:
    body = {"task": task, "config": {"tools": ["calculator"], **config}}
    answer = await client.post("/api/agent/run", json=body, timeout=120)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


async def stopped_in_a_session(stack: Stack, client: httpx.AsyncClient, calls: int) -> None:
    """A web chat's turn, stopped while the model writes."""
    session = await stack.session(client)
    turn = asyncio.create_task(
        client.post(f"/api/sessions/{session}/messages", json={"text": "go on"}, timeout=120)
    )
    await asked(stack, calls)
    assert (await client.post(f"/api/sessions/{session}/stop")).status_code == 202
    assert (await turn).status_code == 200


async def recorded(client: httpx.AsyncClient, runs: int) -> dict[str, Any]:
    """The window's numbers once the worker has written `runs` runs."""
    window: dict[str, Any] = {}

    async def written() -> bool:
        window.update((await client.get("/api/metrics/runs")).json())
        return bool(window["total"] >= runs)

    await until(written, f"{runs} runs in the window")
    return window


async def test_only_the_run_that_answered_is_a_success(stack: Stack) -> None:
    await stack.start_worker()
    never = asyncio.Event()  # the model's answer that never comes
    stack.fake.enqueue(
        Reply(text="Two."),
        *[Reply(tool_calls=[SUM]) for _ in range(5)],  # the same call again and again
        Reply(text="Thinking…", gate=never, gate_after=1),  # past the run's timeout
        Reply(tool_calls=[SUM]),  # and then the step cap
        Reply(text="Still writing…", gate=never, gate_after=1),  # until the person stops it
    )
    try:
        async with stack.client() as client:
            answered = await run(client, "1+1?")
            looped = await run(client, "loop")
            timed_out = await run(client, "slow", timeout=1)
            capped = await run(client, "cap", max_steps=1)
            await stopped_in_a_session(stack, client, len(stack.fake.requests) + 1)
            window = await recorded(client, 5)
    finally:
        never.set()
    assert [r["status"] for r in (answered, looped, timed_out, capped)] == [
        "completed", "looped", "timed_out", "step_limit",
    ]  # fmt: skip
    assert [r["finish_reason"] for r in (looped, timed_out, capped)] == [
        "doom_loop", "timed_out", "max_iterations",
    ]  # fmt: skip
    statuses = sorted(item["status"] for item in window["items"])
    assert statuses == ["completed", "looped", "step_limit", "stopped", "timed_out"]
    assert (window["total"], window["ended"], window["succeeded"]) == (5, 5, 1)
    assert window["success_rate"] == 0.2
    scores = {item["status"]: item["reliability"] for item in window["items"]}
    assert scores["completed"] == 100
    assert all(score <= 50 for status, score in scores.items() if status != "completed")
