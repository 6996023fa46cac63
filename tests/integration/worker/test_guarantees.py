"""The mailbox's promises, with real worker processes: order, exclusion, recovery."""

from __future__ import annotations

import asyncio
import re
import signal
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest
from arq.connections import RedisSettings, create_pool

from bot.mailbox.inbox import Mailbox
from bot.redis.results import done
from bot.session.states import StateStore
from bot.vocabulary.envelope import Envelope, Sender
from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec
from tests.support.metric_names import sample
from tests.support.redis_server import RedisServer
from tests.support.stack import Stack, idle, read_events, send, texts
from tests.support.waiting import WITHIN, until

SESSIONS, MESSAGES = 8, 6


class Ledger:
    """A fake model that checks, per session, that each turn saw every earlier answer."""

    def __init__(self) -> None:
        self.seen: dict[str, list[int]] = defaultdict(list)
        self.violations: list[str] = []

    def __call__(self, request: RecordedRequest) -> Reply:
        found = re.findall(r"s(\d+) m(\d+)", request.last_user_text())
        session = found[0][0]
        history = [
            int(n)
            for message in request.body["messages"][:-1]
            if message["role"] == "assistant"
            for block in message["content"]
            for n in re.findall(r"ans s\d+ m(\d+)", block.get("text", ""))
        ]
        if history != self.seen[session]:
            self.violations.append(f"s{session}: saw {history}, expected {self.seen[session]}")
        numbers = [int(m) for _, m in found]
        self.seen[session] += numbers
        return Reply(text=" ".join(f"ans s{session} m{n}" for n in numbers), delay=0.003)


def message(envelope_id: str, session: str, text: str) -> Envelope:
    return Envelope(id=envelope_id, session=session, text=text, sender=Sender(id="test:u"))


async def mailbox_for(stack: Stack) -> tuple[Mailbox, Any]:
    pool = await create_pool(RedisSettings.from_dsn(stack.redis_url))
    return Mailbox(pool, pool), pool


def text_to(streaming: asyncio.Event) -> Callable[[dict[str, Any]], Awaitable[None]]:
    """An `on_event` for `read_events` that sets `streaming` at the reply's first text."""

    async def seen(event: dict[str, Any]) -> None:
        if event["type"] == "text_delta":
            streaming.set()

    return seen


async def drained(mailbox: Mailbox, session: str) -> None:
    """Wait for the inbox to empty: a turn commits only after its reply has streamed."""

    async def empty() -> bool:
        return await mailbox.pending(session) == 0

    await until(empty, f"{session}'s inbox emptied")


@pytest.mark.parametrize(
    "stack", [{}, {"PARLEY_MERGE_MESSAGES": "1"}], indirect=True, ids=["merged", "one-by-one"]
)
async def test_order_and_exclusion_across_workers(stack: Stack) -> None:
    for _ in range(3):
        await stack.start_worker_process()
    ledger = Ledger()
    stack.fake.responder = ledger
    mailbox, pool = await mailbox_for(stack)

    async def user(s: int) -> None:
        for m in range(MESSAGES):
            envelope = Envelope(
                id=f"s{s}-m{m}",
                session=f"test:s{s}",
                text=f"s{s} m{m}",
                sender=Sender(id=f"test:u{s}"),
            )
            assert (await mailbox.submit(envelope)).accepted
            await asyncio.sleep(0.01 * (s % 3))

    await asyncio.gather(*(user(s) for s in range(SESSIONS)))
    await until(
        lambda: sum(map(len, ledger.seen.values())) >= SESSIONS * MESSAGES,
        "every message seen by the model",
    )
    await idle(stack.redis_url)  # every turn committed: nothing more may arrive
    assert ledger.violations == []
    assert dict(ledger.seen) == {str(s): list(range(MESSAGES)) for s in range(SESSIONS)}
    for s in range(SESSIONS):
        assert await mailbox.pending(f"test:s{s}") == 0
    merged = SESSIONS * MESSAGES - len(stack.fake.requests)
    print(
        f"\n{len(stack.fake.requests)} turns for {SESSIONS * MESSAGES} messages "
        f"({merged} merged into the turn before them)"
    )
    assert stack.fake.rejected == []
    await pool.aclose()


async def test_worker_killed_mid_stream_another_finishes_the_reply(stack: Stack) -> None:
    first = await stack.start_worker_process()
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(
            text="This first attempt will be cut off by a crash",
            chunk_size=4,
            gate=gate,
            gate_after=8,
        ),
        Reply(text="The complete answer."),
    )
    async with stack.client() as client:
        session = await stack.session(client)
        async with client.stream(
            "POST", f"/api/sessions/{session}/messages", json={"text": "tell me"}
        ) as response:
            streaming = asyncio.Event()
            reading = asyncio.create_task(read_events(response, text_to(streaming)))
            await until(lambda: len(stack.fake.requests) == 1, "the model called")
            await (
                stack.start_worker_process()
            )  # standing by, as in production: its start is not timed
            await asyncio.wait_for(streaming.wait(), WITHIN)  # the client has seen some text
            stack.kill(first)
            killed = time.monotonic()
            events = await asyncio.wait_for(reading, 30)
    recovery = time.monotonic() - killed
    gate.set()
    print(
        f"\nturn finished on another worker {recovery:.1f} s after SIGKILL "
        "(default settings: liveness TTL 3 s, sweep every 1 s)"
    )
    assert recovery < 10
    reset = next(i for i, e in enumerate(events) if e["type"] == "reset")
    before = texts(events[:reset])  # what the client saw of the cut attempt
    assert before and "This first attempt will be cut off by a crash".startswith(before)
    assert texts(events) == "The complete answer."
    assert events[-1]["type"] == "completed" and events[-1]["finish_reason"] == "end_turn"
    second = stack.fake.requests[1].body["messages"]
    assert sum("tell me" in str(m) for m in second) == 1  # the user message was not added twice
    await idle(stack.redis_url)
    async with stack.client() as client:
        recorded = (await client.get(f"/api/sessions/{session}")).json()
    assert (recorded["messages"], recorded["runs"]) == (2, 1)  # and recorded once
    assert [m["text"].split("\n")[-1] for m in recorded["recent"]] == [
        "tell me",
        "The complete answer.",
    ]


async def test_worker_killed_mid_tool_call_does_not_repeat_it(stack: Stack) -> None:
    first = await stack.start_worker_process()
    target = stack.tmp / "side-effect.txt"
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("slow_write", {"path": str(target), "seconds": 2})]),
        Reply(text="The write was interrupted; shall I try again?"),
    )
    async with stack.client() as client:
        session = await stack.session(client)
        async with client.stream(
            "POST", f"/api/sessions/{session}/messages", json={"text": "write it"}
        ) as response:

            async def crash_in_tool(event: dict[str, Any]) -> None:
                if event["type"] == "tool_call_start" and first.returncode is None:
                    await asyncio.sleep(0.5)  # the tool is running (it takes 2 s)
                    stack.kill(first)
                    await first.wait()
                    await stack.start_worker_process()

            events = await read_events(response, crash_in_tool)
        trace = await traced_run(client, session)
    assert not target.exists()
    results = stack.fake.requests[1].tool_results()
    assert len(results) == 1 and results[0][1].startswith("Interrupted:")
    assert texts(events) == "The write was interrupted; shall I try again?"
    assert stack.fake.rejected == []
    # One run in the record, both workers' parts in its trace.
    nodes = [(n["kind"], n["name"], n["status"]) for n in trace["nodes"]]
    assert nodes == [
        ("model_call", "model", "ok"),
        ("tool_call", "slow_write", "error"),  # started by the first, interrupted by its death
        ("model_call", "model", "ok"),
    ]
    assert trace["run"]["trigger"] == "resume"


async def traced_run(client: httpx.AsyncClient, session: str) -> dict[str, Any]:
    """The trace of the session's last run, once its record is written."""

    async def recorded() -> bool:
        return bool((await client.get(f"/api/sessions/{session}")).json().get("runs"))

    await until(recorded, f"a run of {session} recorded")
    detail = (await client.get(f"/api/sessions/{session}")).json()
    run_id = detail["recent"][-1]["run_id"]
    found: dict[str, Any] = (await client.get(f"/api/traces/{run_id}")).json()
    return found


async def test_lost_wake_up_is_recovered_by_the_sweep(stack: Stack) -> None:
    await stack.start_worker_process()
    stack.fake.enqueue(Reply(text="found you"))
    pool = await create_pool(RedisSettings.from_dsn(stack.redis_url))

    class Dropped:
        async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> None:
            return None  # the web process died between ingest and enqueue

    mailbox = Mailbox(pool, Dropped())
    await mailbox.submit(message("lost-1", "test:lost", "anyone?"))
    took = await until(lambda: len(stack.fake.requests) == 1, "the sweep picking the session up")
    print(f"\nsession with no drain job picked up by the sweep after {took:.1f} s")
    assert took < 15  # the sweep runs every second
    await drained(mailbox, "test:lost")
    await pool.aclose()


async def test_stop_ends_the_running_turn_at_once(stack: Stack) -> None:
    await stack.start_worker_process()
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(text="A long story that goes on and on", chunk_size=4, gate=gate, gate_after=6)
    )
    async with stack.client() as client:
        session = await stack.session(client)
        async with client.stream(
            "POST", f"/api/sessions/{session}/messages", json={"text": "story"}
        ) as response:
            streaming = asyncio.Event()
            reading = asyncio.create_task(read_events(response, text_to(streaming)))
            await asyncio.wait_for(streaming.wait(), WITHIN)  # the client has seen some text
            stopped = time.monotonic()
            answer = await client.post(f"/api/sessions/{session}/stop")
            events = await asyncio.wait_for(reading, 10)
        took = time.monotonic() - stopped
        gate.set()
        assert answer.status_code == 202 and answer.json()["workers"] == 1
        print(f"\n/stop ended the turn in {took * 1000:.0f} ms")
        assert events[-1]["type"] == "completed"
        assert events[-1]["finish_reason"] == "cancelled"
        assert texts(events) == "A long story that goes on and on"[: len(texts(events))]
        stack.fake.enqueue(Reply(text="next"))
        assert texts(await send(client, session, "go on")) == "next"
    kept = stack.fake.requests[-1].body["messages"]
    assert texts(events) in str(kept)  # what was streamed stays in the conversation


async def test_poison_message_goes_to_dead_letters_and_the_session_goes_on(
    stack: Stack,
) -> None:
    def brain(request: RecordedRequest) -> Reply:
        if "poison" in request.last_user_text() and not request.tool_results():
            return Reply(tool_calls=[ToolCallSpec("crash_worker", {})])
        return Reply(text="fine")

    stack.fake.responder = brain
    worker = await stack.start_worker_process()
    crashes = 0
    async with stack.client() as client:
        before = sample((await client.get("/metrics")).text, "parley_dead_letters_total")
        session = await stack.session(client)
        async with client.stream(
            "POST", f"/api/sessions/{session}/messages", json={"text": "poison"}
        ) as response:
            reading = asyncio.create_task(read_events(response))
            while not reading.done():
                if worker.returncode is not None:
                    crashes += 1
                    worker = await stack.start_worker_process()  # a supervisor restarts it
                await asyncio.sleep(0.1)
            events = reading.result()
        assert texts(await send(client, session, "hello again")) == "fine"
        after = sample((await client.get("/metrics")).text, "parley_dead_letters_total")
    assert after == before + 1  # the deployment's count, kept in Redis
    assert crashes == 3
    assert events[-1]["type"] == "completed"
    assert "could not process that message (it failed 3 times)" in events[-2]["message"]
    pool = await create_pool(RedisSettings.from_dsn(stack.redis_url))
    dead = await done(pool.lrange("parley:dead", 0, -1))
    assert len(dead) == 1 and b'"poison"' in dead[0]
    await pool.aclose()


async def test_redis_restart_loses_nothing_accepted(
    own_stack: tuple[Stack, RedisServer],
) -> None:
    """On a Redis of its own: restarting the shared one would replay every earlier test's
    writes from its AOF."""
    stack, redis_server = own_stack
    await stack.start_worker_process()
    stack.fake.responder = lambda request: Reply(text="ok " + request.last_user_text()[-3:])
    mailbox, pool = await mailbox_for(stack)
    for n in range(5):
        await mailbox.submit(message(f"r{n}", "test:r", f"m{n:02}"))
    await pool.aclose()
    redis_server.restart()
    mailbox, pool = await mailbox_for(stack)
    for n in range(5, 10):
        await mailbox.submit(message(f"r{n}", "test:r", f"m{n:02}"))

    def seen() -> str:
        return "".join(r.last_user_text() for r in stack.fake.requests)

    def missing() -> str:
        log = (stack.tmp / "worker-0.log").read_text(errors="replace")
        return f"all ten messages seen (seen: {seen()!r}); the worker's log:\n{log}"

    await until(lambda: all(f"m{n:02}" in seen() for n in range(10)), missing)
    await drained(mailbox, "test:r")
    await pool.aclose()


async def test_sigterm_hands_the_turn_over_at_once(stack: Stack) -> None:
    first = await stack.start_worker_process()
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(text="Cut short by a deploy", chunk_size=4, gate=gate, gate_after=6),
        Reply(text="Finished elsewhere."),
    )
    mailbox, pool = await mailbox_for(stack)
    await mailbox.submit(message("t1", "test:term", "go"))
    await until(lambda: len(stack.fake.requests) == 1, "the model called")
    await stack.start_worker_process()
    terminated = time.monotonic()
    stack.kill(first, signal.SIGTERM)
    took = await until(lambda: len(stack.fake.requests) == 2, "the turn restarted elsewhere")
    gate.set()
    assert await asyncio.wait_for(first.wait(), 10) == 0
    print(
        f"\nafter SIGTERM the turn restarted on another worker in {took:.2f} s "
        "(handed over, not left to the liveness TTL of 3 s)"
    )
    assert took < 2.5
    await drained(mailbox, "test:term")
    assert time.monotonic() - terminated < 10
    await pool.aclose()


@pytest.mark.parametrize("stack", [{"PARLEY_LEASE_TTL": "300"}], indirect=True)
async def test_a_paused_holder_cannot_commit_after_losing_its_lease(stack: Stack) -> None:
    """A lease of 5 minutes, so that only the liveness key can hand the session over, and
    only the liveness beat can tell the woken holder at once that it lost it."""
    zombie = await stack.start_worker_process()
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(text="zombie text", chunk_size=2, gate=gate, gate_after=4),
        Reply(text="The live worker answered."),
        Reply(text="second answer"),
    )
    mailbox, pool = await mailbox_for(stack)
    await mailbox.submit(message("z1", "test:zombie", "first"))
    await until(lambda: len(stack.fake.requests) == 1, "the model called")
    await stack.start_worker_process()  # standing by: its start is not timed
    stack.kill(zombie, signal.SIGSTOP)  # paused past its liveness TTL, like a long VM stall
    stopped = time.monotonic()
    await until(lambda: len(stack.fake.requests) == 2, "the paused holder replaced")
    print(f"\nSIGSTOPped holder replaced {time.monotonic() - stopped:.1f} s after the stop")
    await mailbox.submit(message("z2", "test:zombie", "second"))
    await until(lambda: len(stack.fake.requests) == 3, "the second message answered")
    stack.kill(zombie, signal.SIGCONT)
    woke, log = time.monotonic(), stack.tmp / "worker-0.log"
    # its next liveness beat finds the key lapsed, and the turn stops without waiting for
    # the lease heartbeat (every 10 s) or for its stream to end
    stopping = await until(
        lambda: b"expired during a turn; stopped it" in log.read_bytes(),
        "the woken holder stopping",
    )
    print(f"the woken holder stopped its turn {time.monotonic() - woke:.1f} s after SIGCONT")
    assert stopping < 5  # its liveness beat told it, well before the lease's heartbeat
    gate.set()  # the zombie's model stream could now finish; its writes must all be refused
    await asyncio.sleep(2)
    state = await StateStore(mailbox).load("test:zombie")
    assert state is not None
    answers = [m.text for m in state.messages if m.role == "assistant"]
    assert answers == ["The live worker answered.", "second answer"]
    assert await mailbox.pending("test:zombie") == 0
    await pool.aclose()
