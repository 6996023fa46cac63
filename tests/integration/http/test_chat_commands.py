"""Commands typed in an API conversation (the web chat posts its messages there), through the
real web app, worker, Redis and database: `/compact` (also as its own route) and `/new` queued
in order with the messages and answered by the worker; `/memory`, `/memory search WORDS` and
`/forget N` answered at once from the caller's own memories, never another person's."""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest

from adapters.chat.memory_list import FORGET_USAGE, PRIVATE_HEADER, SEARCH_USAGE, USAGE
from bot.session.commands import FRESH_START, SHORT
from bot.store.digests import Digests
from tests.agent.test_context import is_summary_request
from tests.fakes.llm import RecordedRequest, Reply
from tests.integration.telegram.test_memory import REX
from tests.integration.telegram.test_replies import said
from tests.support.chat_stores import database_of, kept, recall_store
from tests.support.stack import Stack, idle, read_events, send, texts

CALLER = "http:local"  # who the API acts for on this machine, without a token
NOTES = "Notes: the person spoke of tides."
COMPACTED = re.compile(
    r"Compacted the conversation: about [\d,]+ → [\d,]+ tokens \(2 earlier messages summarised\)\."
)


def answering(request: RecordedRequest) -> Reply:
    if is_summary_request(request):
        return Reply(text=NOTES)
    return Reply(text="noted")


async def said_until(client: httpx.AsyncClient, session: str, wanted: re.Pattern[str]) -> list[str]:
    """The texts of the session's events from its start, until one is `wanted`."""
    shown: list[str] = []
    headers = {"Last-Event-ID": "0-0"}
    async with client.stream("GET", f"/api/sessions/{session}/events", headers=headers) as events:
        async for line in events.aiter_lines():
            if line.startswith("data: "):
                event = json.loads(line[6:])
                if event["type"] in ("text_delta", "error"):
                    shown.append(event.get("text") or event["message"])
                if shown and wanted.fullmatch(shown[-1]):
                    return shown
    return shown


@pytest.mark.parametrize("stack", [{"PARLEY_COMPACT_KEEP_TURNS": "1"}], indirect=True)
async def test_compact_is_queued_in_order_and_the_next_turn_reads_the_summary(
    stack: Stack,
) -> None:
    await stack.start_worker()
    stack.fake.responder = answering
    async with stack.client() as client:
        session = await stack.session(client)
        await send(client, session, "the tide comes in twice a day")
        await send(client, session, "and the moon pulls it")
        path = f"/api/sessions/{session}/compact"
        queued = await client.post(path, headers={"Idempotency-Key": "c-1"})
        again = await client.post(path, headers={"Idempotency-Key": "c-1"})
        await send(client, session, "what did I say?")  # after /compact, in order
        shown = await said_until(client, session, COMPACTED)
    assert queued.status_code == 202 and queued.json() == {"command": "compact", "id": "c-1"}
    assert again.status_code == 409 and again.json()["error"] == "this command was already received"
    assert shown[:2] == ["noted", "noted"]  # the turns before it, then what it saved
    (summary,) = [r for r in stack.fake.requests if is_summary_request(r)]
    assert "twice a day" in json.dumps(summary.body) and "moon" not in json.dumps(summary.body)
    last = json.dumps(stack.fake.requests[-1].body["messages"])
    assert NOTES in last and "twice a day" not in last and "the moon pulls it" in last


async def test_compact_and_new_typed_as_messages_are_answered_on_their_stream(
    stack: Stack,
) -> None:
    await stack.start_worker()
    stack.fake.responder = answering
    async with stack.client() as client:
        session = await stack.session(client)
        short = await send(client, session, "/compact")
        await send(client, session, "remember the tide")
        new = await send(client, session, "/NEW")
        await send(client, session, "what did I say?")
    assert texts(short) == SHORT and short[-1]["type"] == "completed"
    assert texts(new) == FRESH_START
    assert "remember the tide" not in json.dumps(stack.fake.requests[-1].body["messages"])
    assert len(stack.fake.requests) == 2  # neither command asked the model


async def test_compact_for_an_unknown_session_is_refused(stack: Stack) -> None:
    async with stack.client() as client:
        answers = [
            await client.post(f"/api/sessions/{session}/compact")
            for session in ("nosuch", "0" * 32, "../x")
        ]
        long_key = await client.post(
            f"/api/sessions/{await stack.session(client)}/compact",
            headers={"Idempotency-Key": "k" * 201},
        )
    assert [answer.status_code for answer in answers] == [404, 404, 404]
    assert answers[0].json() == {"error": "unknown session"}
    assert long_key.status_code == 400
    await idle(stack.redis_url)


async def answered(client: httpx.AsyncClient, session: str, text: str) -> str:
    events: list[dict[str, Any]] = []
    async with client.stream(
        "POST", f"/api/sessions/{session}/messages", json={"text": text}
    ) as response:
        assert response.status_code == 200, await response.aread()
        events = await read_events(response)
    assert [event["type"] for event in events] == ["text_delta", "completed"]
    return texts(events)


async def test_memory_and_forget_answer_from_the_caller_s_own_memories(stack: Stack) -> None:
    async with recall_store(stack) as recall:
        rex, tea = await kept(recall, CALLER, [REX, "I drink green tea"])
        (bobs,) = await kept(recall, "tg:1", ["Bob's cat is called Tom"])
        await kept(recall, "chat:tg:-100", ["The team deploys on Thursdays"])
        async with stack.client() as client:
            session = await stack.session(client)
            listed = await answered(client, session, "/memory")
            found = await answered(client, session, "/memory search pet")
            usages = [
                await answered(client, session, said)
                for said in ("/memory everything", "/memory search", "/forget", "/forget two")
            ]
            not_mine = await answered(client, session, f"/forget {bobs.id}")
            forgot = await answered(client, session, f"/forget #{tea.id}")
            after = await answered(client, session, "/Memory")
        assert [m.text for m in await recall.memories.all("tg:1")] == ["Bob's cat is called Tom"]
        assert [m.text for m in await recall.memories.all(CALLER)] == [REX]
    assert listed.split("\n") == [PRIVATE_HEADER, tea.line(), rex.line()]
    assert found.split("\n")[1] == rex.line() and "Tom" not in found
    assert usages == [USAGE, SEARCH_USAGE, FORGET_USAGE, FORGET_USAGE]
    assert not_mine == f"There is no memory {bobs.id} here."
    assert forgot == f"Forgot #{tea.id}."
    assert after.split("\n") == [PRIVATE_HEADER, rex.line()]
    assert stack.fake.requests == []  # no model was asked, no turn queued


async def test_the_caller_switches_their_own_daily_digest(stack: Stack) -> None:
    async with database_of(stack) as database, stack.client() as client:
        digests = Digests(database.engine)
        session = await stack.session(client)
        status = await answered(client, session, "/memory digest")
        off = await answered(client, session, "/memory digest off")
        assert await digests.off([CALLER]) == {CALLER}
        again = await answered(client, session, "/memory DIGEST on")
        assert await digests.off([CALLER]) == set()
    assert status.startswith("The daily digest about you is on.")
    assert off.startswith("I will keep no daily digest about you from now on")
    assert again.startswith("I will keep a daily digest about you again")
    assert stack.fake.requests == []


async def test_a_quiet_check_in_is_made_listed_and_cancelled_in_the_conversation(
    stack: Stack,
) -> None:
    async with stack.client() as client:
        session = await stack.session(client)
        made = await answered(client, session, "/checkin every 2h look at the build")
        tasks = (await client.get("/api/tasks")).json()["items"]
        listed = await answered(client, session, "/checkin")
        (task,) = tasks
        gone = await answered(client, session, f"/checkin off {task['id']}")
        after = (await client.get(f"/api/tasks/{task['id']}")).json()
    assert made.startswith(f"Check-in #{task['id']} set: every 2 hours")
    assert task["quiet"] is True and task["prompt"] == "look at the build"
    assert task["session"] == f"http:{session}" and f"#{task['id']}" in listed
    assert gone == f"Cancelled check-in #{task['id']}." and after["status"] == "cancelled"
    assert stack.fake.requests == []  # answered at once, no model asked


async def test_other_slashes_and_commands_with_files_go_to_the_model(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.responder = lambda request: Reply(text=f"got {said(request)}")
    async with stack.client() as client:
        session = await stack.session(client)
        weather = await send(client, session, "/weather Berlin")
        path = f"/api/sessions/{session}/messages"
        with_file = await client.post(
            path,
            files={"file": ("notes.txt", b"tides", "text/plain")},
            data={"text": "/memory"},
        )
    assert texts(weather) == "got /weather Berlin"
    assert with_file.status_code == 200 and "got /memory" in with_file.text
