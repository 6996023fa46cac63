"""Scheduled tasks end to end with a `parley scheduler` process: a recurring task in a Telegram
chat stops at a press of its Cancel button, and a task an operator makes through the API posts
its run into the HTTP session's event stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.fakes.llm import RecordedRequest, Reply
from tests.integration.telegram.test_replies import ANN
from tests.integration.telegram.test_task_list import ANN_SENDER, listed, press, status_of
from tests.support.chat_tasks import add_task, task_book
from tests.support.schedulers import Schedulers
from tests.support.stack import Stack, idle
from tests.support.telegram import TelegramStack
from tests.support.waiting import WITHIN, until


def answering_runs(recorded: RecordedRequest) -> Reply:
    """Each scheduled run is answered with the last line of its prompt."""
    return Reply(text=f"Done: {recorded.last_user_text().splitlines()[-1]}")


@pytest.fixture
async def schedulers(tg_stack: TelegramStack) -> AsyncIterator[Schedulers]:
    running = Schedulers(tg_stack.redis_url, tg_stack.env, tg_stack.tmp)
    try:
        yield running
    finally:
        await running.stop()


@pytest.fixture
async def http_schedulers(stack: Stack) -> AsyncIterator[Schedulers]:
    """Schedulers for the HTTP stack, one of them leading."""
    running = Schedulers(stack.redis_url, stack.env, stack.tmp)
    try:
        await running.start()
        await running.wait_for_leader()
        yield running
    finally:
        await running.stop()


async def test_a_recurring_task_stops_at_a_press_of_its_cancel_button(
    tg_stack: TelegramStack, schedulers: Schedulers
) -> None:
    tg_stack.fake.responder = answering_runs
    chat = tg_stack.tg.private_chat(ANN)
    await tg_stack.start_worker()
    await schedulers.start()
    await schedulers.wait_for_leader()
    async with task_book(tg_stack) as book:
        task = await add_task(
            book, f"tg:{chat.id}", ANN_SENDER, "Say the tide table", when="every 2 seconds"
        )

        def said() -> list[str]:
            return [m.text for m in tg_stack.tg.messages(chat) if m.text.startswith("Done:")]

        await until(lambda: len(said()) >= 2, "two runs answered in the chat")
        shown = await listed(tg_stack, chat)
        answer = await press(tg_stack, chat, ANN, shown.message_id, f"task:cancel:{task.id}")
        assert answer == f"Cancelled task {task.id}."
        assert await status_of(book, task.id) == "cancelled"
        leader = await schedulers.wait_for_leader()
        off_the_clock = f"Removed job {task.id}\n"
        await until(lambda: off_the_clock in schedulers.log(leader), "the task off the clock")
        await idle(tg_stack.redis_url)  # the runs sent before it are answered
        final = await book.get(task.id)
        assert final is not None
        await asyncio.sleep(4)  # two more intervals: the chat stays quiet
        again = await book.get(task.id)
        assert again is not None and again.runs == final.runs
    assert set(said()) == {"Done: Say the tide table"}
    assert len(said()) == final.runs  # each run answered once, none after the cancel


async def test_a_task_made_through_the_api_posts_its_run_in_the_http_session(
    stack: Stack, http_schedulers: Schedulers
) -> None:
    stack.fake.responder = answering_runs
    await stack.start_worker()
    async with stack.client() as client:
        session = await stack.session(client)
        made = await client.post(
            "/api/tasks",
            json={"session": f"http:{session}", "prompt": "Ring the bell", "when": "in 3 s"},
        )
        assert made.status_code == 201, made.text
        assert made.json()["next_runs"]
        events = await _events_until_completed(client, session)
    shown = "".join(e["text"] for e in events if e["type"] == "text_delta")
    assert shown == "Done: Ring the bell"
    recorded = stack.fake.requests[-1].last_user_text()
    assert "Scheduled task" in recorded and "Ring the bell" in recorded


async def _events_until_completed(client: httpx.AsyncClient, session: str) -> list[dict[str, Any]]:
    """The session's event stream from now until a turn completes."""
    events: list[dict[str, Any]] = []
    async with asyncio.timeout(WITHIN):
        async with client.stream("GET", f"/api/sessions/{session}/events") as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    events.append(json.loads(line[6:]))
                    if events[-1]["type"] == "completed":
                        return events
    return events


async def test_a_task_with_an_output_schema_has_its_runs_answers_checked(
    stack: Stack, http_schedulers: Schedulers
) -> None:
    """The task keeps its config; each run is answered in JSON its schema accepts, repaired
    once here, and the run's trace keeps the JSON."""
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="It rang."), Reply(text='{"rang": true}'))
    schema = {"type": "object", "required": ["rang"], "properties": {"rang": {"type": "boolean"}}}
    async with stack.client() as client:
        session = await stack.session(client)
        body = {
            "session": f"http:{session}",
            "prompt": "Ring the bell",
            "when": "in 3 s",
            "config": {"output_schema": schema},
        }
        made = await client.post("/api/tasks", json=body)
        assert made.status_code == 201, made.text
        assert made.json()["config"]["output_schema"] == schema
        events = await _events_until_completed(client, session)
        assert events[-1]["output"] == {"rang": True}
        run_id = await _recorded_run(client, session)
        trace = (await client.get(f"/api/traces/{run_id}")).json()
    assert [n["kind"] for n in trace["nodes"] if n["kind"] in ("validation", "repair")] == [
        "validation",
        "repair",
        "validation",
    ]
    assert trace["output"] == {"rang": True} and trace["run"]["trigger"] == "scheduled"


async def _recorded_run(client: httpx.AsyncClient, session: str) -> str:
    """The id of the session's last run, once the runs table has one."""

    async def recorded() -> dict[str, Any] | None:
        detail: dict[str, Any] = (await client.get(f"/api/sessions/{session}")).json()
        return detail if detail.get("runs") else None

    await until(recorded, f"a run of {session} recorded")
    detail = await recorded()
    assert detail is not None
    return str(detail["recent"][-1]["run_id"])
