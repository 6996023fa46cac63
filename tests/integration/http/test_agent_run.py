"""`POST /api/agent/run` end to end: a real web process and worker, the fake model behind the
real SDK. A run answered as JSON and as a stream, its schema repaired, a plan_execute run,
identical concurrent requests made one run, and every bad request refused before anything
is queued."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from bot.redis import keys
from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.stack import Stack
from tests.support.waiting import until

SCHEMA = {
    "type": "object",
    "required": ["answer"],
    "properties": {"answer": {"type": "integer"}},
    "additionalProperties": False,
}


async def traced(client: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    """The run's trace, once the worker has written its record (after its stream ended)."""
    answers: list[httpx.Response] = []

    async def written() -> bool:  # before, it is unknown, or shown queued or running
        answers.append(await client.get(f"/api/traces/{run_id}"))
        found = answers[-1]
        return found.status_code != 404 and (
            found.status_code != 200 or found.json()["run"]["status"] not in ("queued", "running")
        )

    await until(written, f"the trace of {run_id}")
    found = answers[-1]
    assert found.status_code == 200, found.text
    trace: dict[str, Any] = found.json()
    return trace


async def asked(stack: Stack, calls: int) -> None:
    """Once the model has been called `calls` times."""
    await until(lambda: len(stack.fake.requests) >= calls, f"{calls} model calls", every=0.02)


def sse_events(text: str) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for block in text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            found.append((lines["event"], json.loads(lines["data"])))
    return found


async def test_a_run_is_answered_as_json_with_its_trace(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text="It is 42."),
    )
    async with stack.client() as client:
        body = {"task": "6*7?", "config": {"tools": ["calculator"], "max_steps": 3}}
        answer = await client.post("/api/agent/run", json=body, timeout=60)
        assert answer.status_code == 200, answer.text
        run = answer.json()
        trace = await traced(client, run["run_id"])
    assert run["status"] == "completed" and run["finish_reason"] == "end_turn"
    assert run["text"] == "It is 42." and run["steps"] == 2 and not run["deduplicated"]
    assert run["trace"] == f"/api/traces/{run['run_id']}"
    offered = stack.fake.requests[0].body["tools"]
    assert [t["name"] for t in offered] == ["calculator"]
    assert [n["kind"] for n in trace["nodes"]] == ["model_call", "tool_call", "model_call"]


async def test_an_answer_is_repaired_to_its_schema_and_the_trace_says_so(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text='{"answer": "forty-two"}'), Reply(text='{"answer": 42}'))
    async with stack.client() as client:
        body = {"task": "6*7 as JSON", "config": {"output_schema": SCHEMA}}
        run = (await client.post("/api/agent/run", json=body, timeout=60)).json()
        trace = await traced(client, run["run_id"])
    assert run["output"] == {"answer": 42} and run["status"] == "completed"
    assert [(v["valid"], v["repairing"]) for v in run["validations"]] == [
        (False, True),
        (True, False),
    ]
    kinds = [(n["kind"], n["status"]) for n in trace["nodes"]]
    assert kinds == [
        ("model_call", "ok"),
        ("validation", "error"),
        ("repair", "ok"),
        ("model_call", "ok"),
        ("validation", "ok"),
    ]
    assert trace["metrics"]["schema_violations"] == 1
    assert trace["metrics"]["reliability"] == 90
    assert "'forty-two' is not of type 'integer'" in stack.fake.requests[1].last_user_text()


async def test_a_plan_execute_run_streams_its_plan_and_answer(stack: Stack) -> None:
    await stack.start_worker()
    plan = {"steps": [{"id": 1, "title": "Compute", "depends_on": []}]}
    stack.fake.enqueue(
        Reply(text=json.dumps(plan)),
        Reply(text="Computed: 42."),
        Reply(text="The answer is 42.", chunk_size=3),
    )
    async with stack.client() as client:
        body = {"task": "6*7", "config": {"mode": "plan_execute"}, "stream": True}
        answer = await client.post("/api/agent/run", json=body, timeout=60)
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = sse_events(answer.text)
    plans = [data["steps"] for kind, data in events if kind == "plan"]
    assert [[s["status"] for s in steps] for steps in plans] == [["running"], ["done"]]
    text = "".join(data["text"] for kind, data in events if kind == "text_delta")
    assert text == "The answer is 42."
    assert events[-1][0] == "completed" and events[-1][1]["iterations"] == 3


async def test_identical_concurrent_requests_are_one_run(stack: Stack) -> None:
    await stack.start_worker()
    gate = asyncio.Event()
    stack.fake.enqueue(Reply(text="Once.", gate=gate), Reply(text="Again."), Reply(text="Later."))
    body = {"task": "say it once", "config": {"max_steps": 2}}
    async with stack.client() as client:
        first = asyncio.create_task(client.post("/api/agent/run", json=body, timeout=60))
        await asked(stack, 1)
        # The identical second asks for a stream: its headers come once it has joined a run.
        streamed = client.build_request("POST", "/api/agent/run", json={**body, "stream": True})
        second = await client.send(streamed, stream=True)
        other = {"task": "say it once", "config": {"max_steps": 3}}  # not identical
        third = asyncio.create_task(client.post("/api/agent/run", json=other, timeout=60))
        await asked(stack, 2)
        gate.set()
        one, three = [(await task).json() for task in (first, third)]
        two = sse_events((await second.aread()).decode())
        later = (await client.post("/api/agent/run", json=body, timeout=60)).json()
    assert second.headers["X-Parley-Run"] == one["run_id"] and not one["deduplicated"]
    assert second.headers["X-Parley-Deduplicated"] == "true"
    said = "".join(data["text"] for kind, data in two if kind == "text_delta")
    assert {one["text"], three["text"]} == {"Once.", "Again."} and said == one["text"]
    assert two[-1][0] == "completed"
    assert three["run_id"] != one["run_id"]
    assert later["run_id"] not in (one["run_id"], three["run_id"]) and not later["deduplicated"]
    assert later["text"] == "Later."
    assert len(stack.fake.requests) == 3


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"task": "   "}, "task: Value error, the task is only whitespace"),
        ({"task": "x", "colour": "red"}, "colour: Extra inputs are not permitted"),
        ({"task": "x", "config": {"tools": ["nope"]}}, "config.tools: no tool 'nope'"),
        ({"task": "x", "config": {"model": "gpt-9"}}, "does not serve 'gpt-9'"),
        ({"task": "x", "config": {"temperature": 1.5}}, "Anthropic's models take 0 to 1"),
        ({"task": "x", "config": {"top_p": 0}}, "config.top_p: Input should be greater than 0"),
        ({"task": "x", "config": {"max_steps": 0}}, "config.max_steps"),
        ({"task": "x", "config": {"mode": "yolo"}}, "config.mode"),
        ({"task": "x", "config": {"output_schema": {"type": 5}}}, "not a valid JSON Schema"),
        ({"task": "x", "config": {"max_steps": True}}, "config.max_steps: Input should be a valid"),
        ({"task": "x", "config": {"max_steps": "5"}}, "config.max_steps: Input should be a valid"),
        ({"task": "x", "config": {"repair_attempts": "2"}}, "config.repair_attempts: Input"),
        ({"task": "x", "config": {"temperature": True}}, "config.temperature: Input should be"),
        ({"task": "x", "config": {"timeout": "60"}}, "config.timeout: Input should be a valid"),
        ({"task": "x", "config": {"retry": {"attempts": True}}}, "config.retry.attempts: Input"),
        ({"task": "x", "stream": 1}, "stream: Input should be a valid boolean"),
        (
            {"task": "x", "config": {"output_schema": {"pattern": "(?=a)"}}},
            "config.output_schema: Value error, not a valid JSON Schema: at pattern: the pattern",
        ),
    ],
)
async def test_a_bad_run_request_is_refused_and_nothing_is_queued(
    stack: Stack, body: dict[str, Any], problem: str
) -> None:
    async with stack.client() as client:
        answer = await client.post("/api/agent/run", json=body)
    assert answer.status_code == 422, answer.text
    assert any(problem in line for line in answer.json()["problems"]), answer.json()
    redis = Redis.from_url(stack.redis_url)
    try:
        made = [key async for key in redis.scan_iter(f"{keys.PREFIX}:*")]
        armed = await redis.zcard(keys.ARMED_SET)
        jobs = await redis.zcard("arq:queue")
    finally:
        await redis.aclose()
    assert [k for k in made if b":http:" in k or b"{" in k] == [] and armed == jobs == 0
    assert stack.fake.requests == []


async def test_an_http_session_may_plan_first(stack: Stack) -> None:
    """The mode of a web chat's session, at its start or later, as `/mode` sets a chat's."""
    await stack.start_worker()
    plan = {"steps": [{"id": 1, "title": "Think", "depends_on": []}]}
    stack.fake.enqueue(Reply(text=json.dumps(plan)), Reply(text="Thought."), Reply(text="Done."))
    async with stack.client() as client:
        made = await client.post("/api/sessions", json={"mode": "plan_execute"})
        assert made.status_code == 201 and made.json()["mode"] == "plan_execute"
        session = made.json()["id"]
        answer = await client.post(f"/api/sessions/{session}/messages", json={"text": "go"})
        kinds = [kind for kind, _ in sse_events(answer.text)]
        assert "plan" in kinds and kinds[-1] == "completed"
        back = await client.patch(f"/api/sessions/{session}", json={"mode": "react"})
        assert back.json() == {"id": session, "mode": "react"}
        stack.fake.enqueue(Reply(text="Directly."))
        answer = await client.post(f"/api/sessions/{session}/messages", json={"text": "again"})
        assert "plan" not in [kind for kind, _ in sse_events(answer.text)]
        wrong = await client.patch(f"/api/sessions/{session}", json={"mode": "fast"})
        unknown = await client.patch(f"/api/sessions/{'0' * 32}", json={"mode": "react"})
    assert wrong.status_code == 422 and unknown.status_code == 404
    assert len(stack.fake.requests) == 4
