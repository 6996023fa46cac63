"""A `plan_execute` turn whose steps run as helpers, against a real worker (in the test's loop;
a `parley worker` process where one is killed), Redis and the fake model, with the default
settings.

The fake model plays every part: the person's turn (its plan, a step it carries out itself,
the answer from what the steps found) and each helper (its task names its step). Helpers
answer only once all the helpers expected are asking the model at the same time, so a test
passes only if they run in parallel; should they not, the gate opens after `ALONE_S` and the
test says so.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from bot.agent.plan import ANSWER, PLANNING
from tests.fakes.llm import RecordedRequest, Reply
from tests.support.stack import Stack, read_events, send, texts
from tests.support.waiting import until

ALONE_S = 20.0  # how long a helper waits for the others before answering anyway
STEP = re.compile(r"This is step (\d+) of a plan")


def first_text(request: RecordedRequest) -> str:
    return json.dumps(request.body["messages"][0]["content"])


def step_of(request: RecordedRequest) -> int | None:
    """The plan step a helper's request works on; None for the person's own turn."""
    found = STEP.search(first_text(request))
    return int(found[1]) if found else None


def results_in(request: RecordedRequest) -> list[str]:
    """The tool results anywhere in the request's conversation, in order, for either API."""
    found: list[str] = []
    for message in request.body["messages"]:
        if message.get("role") == "tool":
            found.append(str(message["content"]))
        elif isinstance(message.get("content"), list):
            found += [
                str(block["content"])
                for block in message["content"]
                if block.get("type") == "tool_result"
            ]
    return found


class Gate:
    """Opens once `expected` helpers asked the model, or after `ALONE_S` (then `met` is
    False: they did not run together); one that is `held` opens only when the test says."""

    def __init__(self, expected: int, *, held: bool = False) -> None:
        self.expected = expected
        self.held = held
        self.event = asyncio.Event()
        self.asked: list[int] = []
        self.met = False
        if not held:
            asyncio.get_running_loop().call_later(ALONE_S, self.event.set)

    def arrived(self, step: int) -> asyncio.Event:
        self.asked.append(step)
        if len(self.asked) == self.expected and not self.held and not self.event.is_set():
            self.met = True
            self.event.set()
        return self.event


def brain(plan: list[dict[str, Any]], gate: Gate, own: dict[int, str]) -> Any:
    """The person's turn plans `plan`, carries out the steps of `own` itself (their text),
    and answers with what the steps found; each helper answers with its step's title."""
    titles = {step["id"]: step["title"] for step in plan}

    def answer(request: RecordedRequest) -> Reply:
        step = step_of(request)
        if step is not None:
            return Reply(text=f"found {titles[step]}", gate=gate.arrived(step))
        asked = request.last_user_text()
        if PLANNING in asked:
            return Reply(text=json.dumps({"steps": plan}))
        if ANSWER in asked:
            said = [content.split("\n")[-1] for content in results_in(request)]
            return Reply(text="summed: " + " | ".join(said))
        number = int(asked.split("Carry out step ", 1)[1].split()[0])
        return Reply(text=own[number])

    return answer


async def plan_session(client: httpx.AsyncClient) -> str:
    made = await client.post("/api/sessions", json={"mode": "plan_execute"})
    assert made.status_code == 201, made.text
    return str(made.json()["id"])


def plans(events: list[dict[str, Any]]) -> list[list[tuple[int, str]]]:
    return [[(s["id"], s["status"]) for s in e["steps"]] for e in events if e["type"] == "plan"]


async def test_three_independent_steps_run_as_three_helpers_at_once(stack: Stack) -> None:
    """Three steps that need nothing from each other: three helpers, started by Parley in
    one batch and all asking the model before any answered; the answer is written from
    their three results."""
    await stack.start_worker()
    plan = [
        {"id": 1, "title": "Price in Oslo", "depends_on": []},
        {"id": 2, "title": "Price in Rome", "depends_on": []},
        {"id": 3, "title": "Price in Lima", "depends_on": []},
    ]
    gate = Gate(3)
    stack.fake.responder = brain(plan, gate, {})
    async with stack.client() as client:
        events = await send(client, await plan_session(client), "where is bread cheapest?")
    assert gate.met, f"the helpers did not ask together: {gate.asked}"
    assert sorted(gate.asked) == [1, 2, 3]
    starts = [e for e in events if e["type"] == "tool_call_start"]
    assert [e["name"] for e in starts] == ["delegate"] * 3
    assert all(e["arguments"]["task"].startswith("Price in ") for e in starts)
    results = [e for e in events if e["type"] == "tool_call_result"]
    assert [r["is_error"] for r in results] == [False] * 3
    assert plans(events) == [
        [(1, "running"), (2, "running"), (3, "running")],
        [(1, "done"), (2, "done"), (3, "done")],
    ]
    assert texts(events) == "summed: " + " | ".join(f"found {s['title']}" for s in plan)
    completed = [e for e in events if e["type"] == "completed"]
    assert len(completed) == 1 and completed[0]["finish_reason"] == "end_turn"
    parent = [r for r in stack.fake.requests if step_of(r) is None]
    assert len(parent) == 2  # the plan and the answer: the steps were the helpers'
    assert stack.fake.rejected == []


async def test_a_dependent_step_waits_for_its_dependency(stack: Stack) -> None:
    """Step 1 runs alone in the conversation; the two steps that need it start only once it
    is done, together as helpers, each told what it found."""
    await stack.start_worker()
    plan = [
        {"id": 1, "title": "Find the city", "depends_on": []},
        {"id": 2, "title": "Weather in the city", "depends_on": [1]},
        {"id": 3, "title": "Museums in the city", "depends_on": [1]},
    ]
    gate = Gate(2)
    stack.fake.responder = brain(plan, gate, {1: "The city is Oslo."})
    async with stack.client() as client:
        events = await send(client, await plan_session(client), "plan my day in the city")
    assert gate.met, f"the helpers did not ask together: {gate.asked}"
    order = [step_of(r) for r in stack.fake.requests]
    assert order[:2] == [None, None] and set(order[2:4]) == {2, 3} and order[4:] == [None]
    helpers = [r for r in stack.fake.requests if step_of(r) is not None]
    for request in helpers:
        assert "Step 1, Find the city: The city is Oslo." in first_text(request)
    assert plans(events) == [
        [(1, "running"), (2, "pending"), (3, "pending")],
        [(1, "done"), (2, "running"), (3, "running")],
        [(1, "done"), (2, "done"), (3, "done")],
    ]
    assert texts(events) == "summed: found Weather in the city | found Museums in the city"


@pytest.mark.slow(30)
async def test_a_worker_killed_while_the_steps_helpers_run_leaves_one_answer(
    stack: Stack,
) -> None:
    """The worker running the turn and its three helpers is SIGKILLed while they wait for
    the model: another worker takes the turn over, its calls (the same ids) find the same
    three helpers, and the person gets one answer, from their results."""
    first = await stack.start_worker_process()
    plan = [
        {"id": 1, "title": "Price in Oslo", "depends_on": []},
        {"id": 2, "title": "Price in Rome", "depends_on": []},
        {"id": 3, "title": "Price in Lima", "depends_on": []},
    ]
    gate = Gate(3, held=True)
    stack.fake.responder = brain(plan, gate, {})
    async with stack.client() as client:
        session = await plan_session(client)
        async with client.stream(
            "POST", f"/api/sessions/{session}/messages", json={"text": "cheapest bread?"}
        ) as response:

            async def crash_in_helpers(event: dict[str, Any]) -> None:
                if event["type"] == "tool_call_start" and first.returncode is None:
                    await until(lambda: len(gate.asked) == 3, "the three helpers asking")
                    stack.kill(first)
                    await first.wait()
                    gate.event.set()
                    await stack.start_worker_process()

            events = await read_events(response, crash_in_helpers)
    redis = Redis.from_url(stack.redis_url)
    pattern = f"parley:{{http:{session}:helper-*}}:events"  # their state went once read
    helpers = [key async for key in redis.scan_iter(match=pattern)]
    await redis.aclose()
    assert len(helpers) == 3, helpers  # the resumed calls found the same helpers
    completed = [e for e in events if e["type"] == "completed"]
    assert len(completed) == 1 and completed[0]["finish_reason"] == "end_turn"
    assert texts(events) == "summed: " + " | ".join(f"found {s['title']}" for s in plan)
    answers = [r for r in stack.fake.requests if ANSWER in r.last_user_text()]
    assert len(answers) == 1  # the turn answered once
