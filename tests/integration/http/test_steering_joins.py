"""A message sent while the person's turn runs joins it at the next step, through the HTTP API
with the default settings (`steer`): a real web app and worker, the fake model behind the real
SDK. The second message's own stream follows the turn it joined, from the join to the end; the
first one's shows the join too; the turn answers both at once. A worker killed after the second
message arrived and before the turn's next step loses nothing: another worker goes on with the
turn, takes the message in at its step, and nothing is answered twice."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec
from tests.support.stack import Stack, read_events, texts
from tests.support.waiting import until

SUM = ToolCallSpec("calculator", {"expression": "2+2"})
FIRST, SECOND = "open the report", "no, the other report"
ANSWER = "The other report, then."


async def posted(client: httpx.AsyncClient, session: str, text: str) -> list[dict[str, Any]]:
    async with client.stream(
        "POST", f"/api/sessions/{session}/messages", json={"text": text}
    ) as response:
        assert response.status_code == 200, await response.aread()
        return await read_events(response)


def brain(gate: asyncio.Event) -> Any:
    """The first call of a turn asks for a sum (held at `gate`); after its result, the answer."""

    def answer(request: RecordedRequest) -> Reply:
        if request.tool_results():
            return Reply(text=ANSWER)
        return Reply(tool_calls=[SUM], gate=gate)

    return answer


async def recorded_runs(client: httpx.AsyncClient) -> dict[str, Any]:
    """The runs list once the turn's run is in it (the worker writes it after the stream)."""
    runs: dict[str, Any] = {}

    async def written() -> bool:
        runs.update((await client.get("/api/metrics/runs")).json())
        return bool(runs["total"])

    await until(written, "the run recorded")
    return runs


def times_said(request: RecordedRequest, text: str) -> int:
    return sum(text in str(m["content"]) for m in request.body["messages"] if m["role"] == "user")


async def test_a_second_message_joins_the_turn_and_its_stream_follows_it(stack: Stack) -> None:
    await stack.start_worker()
    gate = asyncio.Event()
    stack.fake.responder = brain(gate)
    async with stack.client() as client:
        session = await stack.session(client)
        first = asyncio.create_task(posted(client, session, FIRST))
        await until(lambda: len(stack.fake.requests) == 1, "the first model call")
        second = asyncio.create_task(posted(client, session, SECOND))
        await asyncio.sleep(0.3)  # queued behind the running turn
        gate.set()
        first_events, second_events = await asyncio.gather(first, second)
        runs = await recorded_runs(client)

    assert len(stack.fake.requests) == 2  # one turn: no call answers the second message alone
    assert times_said(stack.fake.requests[1], SECOND) == 1
    (joined,) = [e for e in first_events if e["type"] == "joined"]
    assert joined["text"] == SECOND and len(joined["envelope_ids"]) == 1
    assert texts(first_events) == ANSWER and first_events[-1]["type"] == "completed"
    assert second_events[0]["type"] == "joined"  # its stream starts where it was taken in
    assert texts(second_events) == ANSWER and second_events[-1]["type"] == "completed"
    assert runs["total"] == 1


async def test_a_worker_killed_before_the_step_loses_and_repeats_nothing(stack: Stack) -> None:
    worker = await stack.start_worker_process()
    gate = asyncio.Event()
    stack.fake.responder = brain(gate)
    async with stack.client() as client:
        session = await stack.session(client)
        first = asyncio.create_task(posted(client, session, FIRST))
        await until(lambda: len(stack.fake.requests) == 1, "the first model call")
        second = asyncio.create_task(posted(client, session, SECOND))
        await asyncio.sleep(0.3)  # the second message waits behind the held call
        await stack.start_worker_process()
        stack.kill(worker)
        await worker.wait()
        await until(lambda: len(stack.fake.requests) == 2, "the turn taken over")
        gate.set()
        first_events, second_events = await asyncio.wait_for(asyncio.gather(first, second), 30)
        runs = await recorded_runs(client)

    answered = [r for r in stack.fake.requests if r.tool_results()]
    assert len(answered) == 1 and times_said(answered[0], SECOND) == 1
    assert times_said(answered[0], FIRST) == 1
    assert len(stack.fake.requests) == 3  # the killed call, the same call again, the answer
    assert texts(first_events) == ANSWER == texts(second_events)
    assert first_events[-1]["type"] == second_events[-1]["type"] == "completed"
    assert runs["total"] == 1 and runs["items"][0]["status"] == "completed"
