"""Helpers (`delegate`) against a real worker, Redis and the fake model: a worker in the test's
loop (`Stack.start_worker`), but `parley worker` processes where the test is about them (a
worker killed while its helpers run) or times the turn (parallel helpers, measured against the
web app and the fakes in the test's process, not sharing its loop).

The fake model plays both sides: a parent's request (its person's message) asks for
helpers, a helper's request (its task, "job N") answers after a delay, and the parent's
request that carries the helpers' results sums them up. Each test checks one promise:
parallel helpers take about the time of one, a helper stays within its parent's tokens,
a helper cannot delegate, `/stop` ends the helpers with their parent, and a worker killed
while a helper runs leaves the parent exactly one answer from exactly one helper per call.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from bot.redis import keys
from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec
from tests.support.stack import Stack, read_events, send, texts
from tests.support.waiting import until

HELPER_DELAY_S = 0.15  # before each of a reply's streamed events: about 1 s a reply


def tool_names(request: RecordedRequest) -> list[str]:
    return sorted(str(t["name"]) for t in request.body.get("tools", []))


def is_helper(request: RecordedRequest) -> bool:
    """A helper's request: its first message is its task ("do job N"), not the person's."""
    first = str(request.body["messages"][0]["content"])
    return "job " in first and "please" not in first


def task_of(request: RecordedRequest) -> str:
    return str(request.body["messages"][0]["content"]).rsplit("job ", 1)[1].split()[0]


def helpers_of(stack: Stack) -> list[RecordedRequest]:
    return [r for r in stack.fake.requests if is_helper(r)]


def brain(jobs: int, delay: float = HELPER_DELAY_S, helper: Reply | None = None) -> Any:
    """A parent asks for `jobs` helpers in one reply; each helper answers after `delay`."""

    def answer(request: RecordedRequest) -> Reply:
        if is_helper(request):
            if helper is not None:
                return helper
            task = task_of(request)
            return Reply(text=f"result {task}", delay=delay)
        if results := request.tool_results():
            return Reply(text="summed: " + " | ".join(c.split("\n")[-1] for _, c in results))
        calls = [
            ToolCallSpec("delegate", {"task": f"do job {n} now"}, id=f"toolu_job{n}")
            for n in range(jobs)
        ]
        return Reply(tool_calls=calls)

    return answer


def answer_of(result: dict[str, Any]) -> str:
    """A helper's answer in its call's result, below the line naming its run."""
    head, _, said = str(result["content"]).partition("\n")
    assert head.startswith("[helper run ") and len(head) == len("[helper run ]") + 32, head
    return said


def tool_results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "tool_call_result"]


async def test_three_helpers_run_in_parallel(stack: Stack) -> None:
    """Three delegate calls of one reply: three helpers, each in a session of its own, run
    at once (the turn takes about as long as a turn with one helper), and the parent reads
    each one's answer, in order."""
    await stack.start_worker_process()
    async with stack.client() as client:
        stack.fake.responder = brain(1)
        started = time.monotonic()
        await send(client, await stack.session(client), "please do one")
        one = time.monotonic() - started
        stack.fake.requests.clear()
        stack.fake.responder = brain(3)
        session = await stack.session(client)
        started = time.monotonic()
        events = await send(client, session, "please split this")
        took = time.monotonic() - started
    print(f"\na turn with one helper took {one:.2f} s, with three {took:.2f} s")
    results = tool_results(events)
    assert [r["name"] for r in results] == ["delegate"] * 3
    assert [answer_of(r) for r in results] == [
        "result 0",
        "result 1",
        "result 2",
    ]
    assert all(not r["is_error"] for r in results)
    assert texts(events).startswith("summed: result 0")
    assert len(helpers_of(stack)) == 3
    assert took < 1.3 * one  # in series it would be three times the helper's part
    # Each helper's run is its own, in a session under the parent's, and names no delegate.
    redis = Redis.from_url(stack.redis_url)
    pattern = f"parley:{{http:{session}:helper-*}}:events"
    names = [key.decode() async for key in redis.scan_iter(match=pattern)]
    await redis.aclose()
    assert len(names) == 3, names
    for request in helpers_of(stack):
        assert "delegate" not in tool_names(request)
    parent_request = stack.fake.requests[0]
    assert "delegate" in tool_names(parent_request)
    assert stack.fake.rejected == []


async def test_a_helper_cannot_delegate(stack: Stack) -> None:
    """At the default depth of 1, a helper is not offered `delegate`, and its call of it
    (made anyway) is refused as an unknown tool; the parent still gets the helper's end."""
    await stack.start_worker()
    nested = Reply(tool_calls=[ToolCallSpec("delegate", {"task": "do job 9 deeper"})])
    seen: list[RecordedRequest] = []

    def answer(request: RecordedRequest) -> Reply:
        if is_helper(request):
            seen.append(request)
            if request.tool_results():
                return Reply(text="could not nest")
            return nested
        said: Reply = brain(1)(request)
        return said

    stack.fake.responder = answer
    async with stack.client() as client:
        session = await stack.session(client)
        events = await send(client, session, "please split this")
    assert "delegate" not in tool_names(seen[0])
    ((_, refused),) = seen[1].tool_results()
    assert refused.startswith("Unknown tool 'delegate'")
    (result,) = tool_results(events)
    assert answer_of(result) == "could not nest"
    assert len(seen) == 2  # no helper of the helper ever asked the model


@pytest.mark.parametrize("stack", [{"PARLEY_DELEGATE_TOKENS": "100000"}], indirect=True)
async def test_a_helper_stays_within_its_parents_remaining_tokens(stack: Stack) -> None:
    """An API run with a token budget: its helper may spend at most what the run has left
    when it starts it, however much PARLEY_DELEGATE_TOKENS allows; a helper that keeps
    calling tools stops short of it and says so, and the parent's usage counts its tokens."""
    await stack.start_worker()
    budget = 16_000
    looping = Reply(
        tool_calls=[ToolCallSpec("calculator", {"expression": "1+1"})], output_tokens=700
    )

    def answer(request: RecordedRequest) -> Reply:
        if is_helper(request):
            return Reply(
                tool_calls=[
                    ToolCallSpec("calculator", {"expression": f"{len(helpers_of(stack))}+1"})
                ],
                output_tokens=written(request),  # as a real model: never over max_tokens
            )
        said: Reply = brain(1, helper=looping)(request)
        return said

    stack.fake.responder = answer
    async with stack.client() as client:
        run = await client.post(
            "/api/agent/run",
            json={"task": "please split this", "config": {"token_budget": budget}},
            timeout=120,
        )
    body = run.json()
    parent = [r for r in stack.fake.requests if not is_helper(r)]
    helper = helpers_of(stack)
    helper_tokens = sum(tokens(r) + written(r) for r in helper)
    left = budget - tokens(parent[0])  # at most: its first call also wrote a few
    print(f"\nthe helper spent {helper_tokens} of the {left} tokens its parent had left")
    assert len(helper) >= 2  # it did work before the budget stopped it
    assert helper_tokens <= left
    assert body["usage"]["output_tokens"] >= sum(map(written, helper))  # counted here too
    # The helper's run ended for its budget; so did its parent's, past what it had left.
    redis = Redis.from_url(stack.redis_url, decode_responses=True)
    pattern = f"parley:{{http:{body['session']}:helper-*}}:events"
    (helper_key,) = [key async for key in redis.scan_iter(match=pattern)]
    helper_session = helper_key.split("{", 1)[1].rsplit("}", 1)[0]
    assert await helper_end(redis, helper_session) == "budget_spent"
    await redis.aclose()
    assert body["finish_reason"] == "budget_spent"
    assert (
        body["usage"]["input_tokens"]
        + body["usage"]["output_tokens"]
        + body["usage"]["cache_read_tokens"]
        + body["usage"]["cache_write_tokens"]
        <= budget
    )


def written(request: RecordedRequest) -> int:
    """What the fake model writes to a helper's request: 700 tokens, or its cap if less."""
    return min(700, int(request.body["max_tokens"]))


def tokens(request: RecordedRequest) -> int:
    """What the fake model said the request read."""
    usage = request.usage
    assert usage is not None
    return usage.input_tokens + usage.cache_read + usage.cache_write


async def test_stop_ends_the_helpers_with_their_parent(stack: Stack) -> None:
    """`/stop` on the parent's session while its helpers wait for the model: the parent
    stops, and so does each helper (its run ends as stopped), promptly."""
    await stack.start_worker()
    stack.fake.responder = brain(2, delay=60)
    redis = Redis.from_url(stack.redis_url, decode_responses=True)
    async with stack.client() as client:
        session = await stack.session(client)
        async with client.stream(
            "POST", f"/api/sessions/{session}/messages", json={"text": "please split this"}
        ) as response:
            reading = asyncio.create_task(read_events(response))
            await until(lambda: len(helpers_of(stack)) == 2, "both helpers asking the model")
            stopped = time.monotonic()
            answer = await client.post(f"/api/sessions/{session}/stop")
            assert answer.status_code == 202
            events = await asyncio.wait_for(reading, 30)
        took = time.monotonic() - stopped
        helpers = [
            key.split("{", 1)[1].rsplit("}", 1)[0]
            async for key in redis.scan_iter(match=f"parley:{{http:{session}:helper-*}}:state")
        ]
        assert len(helpers) == 2, helpers

        async def helpers_stopped() -> bool:
            for helper in helpers:
                ended = await helper_end(redis, helper)
                if ended != "cancelled":
                    return False
            return True

        await until(helpers_stopped, "both helpers' runs ending as stopped")
    await redis.aclose()
    print(f"\nthe turn and its helpers stopped {took:.2f} s after /stop")
    assert events[-1]["type"] == "completed" and events[-1]["finish_reason"] == "cancelled"
    assert took < 10
    assert len(helpers_of(stack)) == 2  # no helper asked the model again


async def helper_end(redis: Redis, helper: str) -> str | None:
    """The finish reason of the helper's run, from its event stream, once it ended."""
    entries = await redis.xrange(keys.events(helper))
    for _, fields in entries:
        event = json.loads(fields["event"])
        if event["type"] == "completed":
            return str(event["finish_reason"])
    return None


@pytest.mark.slow(30)
async def test_a_worker_killed_while_a_helper_runs_leaves_one_answer(stack: Stack) -> None:
    """The worker running a parent and its helper is SIGKILLed while the helper waits for
    the model: another worker takes both over; the parent's call finds the same helper
    (no second one is started), and the person gets exactly one answer."""
    first = await stack.start_worker_process()
    stack.fake.responder = brain(1, delay=3)
    async with stack.client() as client:
        session = await stack.session(client)
        async with client.stream(
            "POST", f"/api/sessions/{session}/messages", json={"text": "please split this"}
        ) as response:

            async def crash_in_helper(event: dict[str, Any]) -> None:
                if event["type"] == "tool_call_start" and first.returncode is None:
                    await until(lambda: len(helpers_of(stack)) == 1, "the helper asking")
                    stack.kill(first)
                    await first.wait()
                    await stack.start_worker_process()

            events = await read_events(response, crash_in_helper)
        history = (await client.get(f"/api/sessions/{session}")).json()
    redis = Redis.from_url(stack.redis_url)
    helpers = [k async for k in redis.scan_iter(match=f"parley:{{http:{session}:helper-*}}:events")]
    states = [k async for k in redis.scan_iter(match=f"parley:{{http:{session}:helper-*}}:state")]
    await redis.aclose()
    assert len(helpers) == 1, helpers  # the resumed call found the same helper
    assert states == []  # and, its answer read, dropped the helper's state
    results = tool_results(events)
    assert answer_of(results[-1]) == "result 0", results
    completed = [e for e in events if e["type"] == "completed"]
    assert len(completed) == 1 and completed[0]["finish_reason"] == "end_turn"
    assert texts(events) == "summed: result 0"
    finals = [r for r in stack.fake.requests if not is_helper(r) and r.tool_results()]
    assert len(finals) == 1  # the parent answered once
    assert "helper" not in str(history.get("error", ""))


async def answered(client: httpx.AsyncClient, session: str) -> bool:
    return bool((await client.get(f"/api/sessions/{session}")).json().get("runs"))


def writer(request: RecordedRequest) -> Reply:
    """A parent that asks one helper; the helper writes a file (which needs an approval by
    default), then answers with what came of it; the parent passes the answer on."""
    if is_helper(request):
        if results := request.tool_results():
            return Reply(text=f"wrote: {results[0][1]}")
        return Reply(tool_calls=[ToolCallSpec("write_file", {"path": "a.txt", "content": "x"})])
    if results := request.tool_results():
        return Reply(text="summed: " + results[0][1].split("\n")[-1])
    return Reply(tool_calls=[ToolCallSpec("delegate", {"task": "do job 0 now"}, id="toolu_w")])


async def decide_helpers(
    client: httpx.AsyncClient, session: str, decision: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Send a message and decide each approval asked in its reply as it comes, the reply
    still streaming; its events, and the approvals asked."""
    asked: list[dict[str, Any]] = []

    async def decide(event: dict[str, Any]) -> None:
        if event["type"] == "confirmation_required":
            asked.append(event)
            url = f"/api/confirmations/{event['confirmation_id']}"
            response = await client.post(url, json={"decision": decision})
            assert response.status_code == 202, response.text

    body = {"text": "please split this"}
    async with client.stream("POST", f"/api/sessions/{session}/messages", json=body) as response:
        assert response.status_code == 200
        events = await read_events(response, decide)
    return events, asked


async def test_a_helpers_approval_is_asked_in_its_parents_reply(stack: Stack) -> None:
    """A helper's call that needs an approval (`write_file`, by default) is asked in its
    parent's reply, naming the helper, while the parent's turn runs on; approved there, it
    runs in the helper, whose answer comes back to the parent in the same turn."""
    await stack.start_worker()
    stack.fake.responder = writer
    async with stack.client() as client:
        session = await stack.session(client)
        events, asked = await decide_helpers(client, session, "approve")
    assert len(asked) == 1, [e["content"] for e in events if e["type"] == "tool_call_result"]
    (prompt,) = asked
    assert prompt["helper"] == "do job 0 now"
    assert [c["name"] for c in prompt["calls"]] == ["write_file"]
    (result,) = tool_results(events)
    assert not result["is_error"] and answer_of(result).startswith("wrote: ")
    assert "error" not in answer_of(result).lower()
    assert texts(events).startswith("summed: wrote: ")
    assert [e["finish_reason"] for e in events if e["type"] == "completed"] == ["end_turn"]
    (written,) = list(stack.tmp.rglob("a.txt"))
    assert written.read_text() == "x"
    assert stack.fake.rejected == []


async def test_a_helpers_call_denied_in_its_parents_reply_is_not_run(stack: Stack) -> None:
    """Denied, the helper's call does not run; the helper is told and answers, and so does
    its parent."""
    await stack.start_worker()
    stack.fake.responder = writer
    async with stack.client() as client:
        session = await stack.session(client)
        events, asked = await decide_helpers(client, session, "deny")
    assert len(asked) == 1
    (result,) = tool_results(events)
    assert answer_of(result) == "wrote: Denied by the user."
    assert texts(events) == "summed: wrote: Denied by the user."
    assert not list(stack.tmp.rglob("a.txt"))


@pytest.mark.parametrize("stack", [{"PARLEY_WORKER_SESSIONS": "1"}], indirect=True)
async def test_helpers_need_no_slot_of_their_own(stack: Stack) -> None:
    """One worker with one slot, held by the parent while it waits: its three helpers still
    run (in the parent's slot), so a waiting parent never starves its helpers."""
    await stack.start_worker()
    stack.fake.responder = brain(3)
    async with stack.client() as client:
        session = await stack.session(client)
        events = await asyncio.wait_for(send(client, session, "please split this"), 60)
    assert [answer_of(r) for r in tool_results(events)] == ["result 0", "result 1", "result 2"]
    assert texts(events) == "summed: result 0 | result 1 | result 2"


async def test_a_helper_gets_no_tool_its_parent_may_not_use(stack: Stack) -> None:
    """A helper asked with a tool outside its parent's is not started: the call says which
    tool, and no helper asks the model. One asked with fewer tools is offered only those."""
    await stack.start_worker()
    calls = [
        ToolCallSpec("delegate", {"task": "do job 0 now", "tools": ["no_such_tool"]}),
        ToolCallSpec("delegate", {"task": "do job 1 now", "tools": ["calculator"]}),
    ]

    def answer(request: RecordedRequest) -> Reply:
        if is_helper(request):
            return Reply(text=f"result {task_of(request)}")
        if request.tool_results():
            return Reply(text="done")
        return Reply(tool_calls=calls)

    stack.fake.responder = answer
    async with stack.client() as client:
        session = await stack.session(client)
        events = await send(client, session, "please split this")
    refused, allowed = tool_results(events)
    assert refused["is_error"] and "['no_such_tool']" in refused["content"]
    assert answer_of(allowed) == "result 1"
    (helper,) = helpers_of(stack)
    assert tool_names(helper) == ["calculator"]


async def test_a_session_deleted_takes_its_helpers_with_it(stack: Stack) -> None:
    """Deleting the parent's session deletes its helpers' too: their Redis keys, their
    records and traces (their files are in the parent's workspace, which goes with it)."""
    await stack.start_worker()

    def answer(request: RecordedRequest) -> Reply:
        if is_helper(request):
            return Reply(text="result 0")
        if request.tool_results():
            return Reply(text="done")
        return Reply(tool_calls=[ToolCallSpec("delegate", {"task": "do job 0 now"})])

    stack.fake.responder = answer
    redis = Redis.from_url(stack.redis_url)
    async with stack.client() as client:
        session = await stack.session(client)
        events = await send(client, session, "please split this")
        helper_run = tool_results(events)[0]["content"].split("]")[0].rsplit(" ", 1)[1]

        async def traced() -> bool:
            found = await client.get(f"/api/traces/{helper_run}")
            return found.status_code == 200 and found.json()["run"]["status"] != "running"

        await until(traced, "the helper's run recorded")
        pattern = f"parley:{{http:{session}:helper-*}}:*"
        assert [k async for k in redis.scan_iter(match=pattern)]
        deleted = await client.delete(f"/api/sessions/{session}")
        assert deleted.status_code == 200, deleted.text
        assert [k async for k in redis.scan_iter(match=pattern)] == []
        assert (await client.get(f"/api/traces/{helper_run}")).status_code == 404
    await redis.aclose()
