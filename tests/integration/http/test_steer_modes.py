"""What a message posted while its conversation's turn runs does, through the real web app,
worker, Redis and database, the fake model holding its answer's stream half way:

- in `interrupt` (PARLEY_STEER_MODE, or `/steer interrupt` typed in the conversation) the
  running turn stops where it is, its stream ending `cancelled` with the text so far, which
  stays in the conversation's context; the new message is answered in the next turn, on its
  own stream, and the model reads it once;
- in `queue` the running turn finishes its answer and the new message is answered after it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from adapters.http import place
from bot.redis import keys
from bot.redis.results import done
from tests.fakes.llm import RecordedRequest, Reply
from tests.support.stack import Stack, read_events, recorded, send, texts
from tests.support.waiting import until

STORY = "Once upon a time there was a very long story. " * 8
SHORT = "A short one: the end."
ASKED, THEN = "write me a long story", "no, a short one"
QUEUE_SAID = "From now on a message you send while I work waits until I have answered."
INTERRUPT_SAID = (
    "From now on a message you send while I work stops what I am doing and I start on it."
)


async def posting(
    client: httpx.AsyncClient, session: str, text: str, streaming: asyncio.Event | None = None
) -> list[dict[str, Any]]:
    """The events of the message's stream; `streaming` is set at its first text."""

    async def seen(event: dict[str, Any]) -> None:
        if streaming is not None and event["type"] == "text_delta":
            streaming.set()

    body = {"text": text}
    async with client.stream("POST", f"/api/sessions/{session}/messages", json=body) as response:
        assert response.status_code == 200, await response.aread()
        return await read_events(response, seen)


def held_story(gate: asyncio.Event) -> Reply:
    """The first answer, held after a few chunks (events, counting the stream's opening
    ones) until `gate` is set."""
    return Reply(text=STORY, chunk_size=8, gate=gate, gate_after=8)


def said_to_model(request: RecordedRequest) -> str:
    return json.dumps(request.body["messages"])


def assistant_texts(request: RecordedRequest) -> list[str]:
    """The text of each assistant message the model was sent back."""
    found = []
    for message in request.body["messages"]:
        if message["role"] == "assistant":
            content = message["content"]
            parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
            found.append("".join(p.get("text", "") for p in parts if p.get("type") == "text"))
    return found


async def interrupted(stack: Stack, client: httpx.AsyncClient, session: str) -> None:
    """A story's turn held mid-stream, interrupted by a second message: checked through."""
    gate = asyncio.Event()
    stack.fake.enqueue(held_story(gate), Reply(text=SHORT))
    streaming = asyncio.Event()
    first = asyncio.create_task(posting(client, session, ASKED, streaming))
    try:
        await asyncio.wait_for(streaming.wait(), 30)
        second = await asyncio.wait_for(posting(client, session, THEN), 30)
        story = await asyncio.wait_for(first, 30)
    finally:
        gate.set()
        first.cancel()

    done = story[-1]
    assert (done["type"], done["finish_reason"]) == ("completed", "cancelled")
    partial = texts(story)
    assert partial and STORY.startswith(partial) and len(partial) < len(STORY)
    assert done["text"] == partial  # what it said so far is the stopped turn's answer
    assert (second[-1]["finish_reason"], texts(second)) == ("end_turn", SHORT)

    asked_first, asked_then = stack.fake.requests[-2:]
    assert THEN not in said_to_model(asked_first)
    assert said_to_model(asked_then).count(THEN) == 1  # read once, never answered twice
    assert said_to_model(asked_then).count(ASKED) == 1
    assert assistant_texts(asked_then)[-1] == partial  # kept in the context


@pytest.mark.parametrize("stack", [{"PARLEY_STEER_MODE": "interrupt"}], indirect=True)
async def test_a_message_interrupts_the_running_turn_and_is_answered_next(stack: Stack) -> None:
    await stack.start_worker()
    async with stack.client() as client:
        session = await stack.session(client)
        await interrupted(stack, client, session)
    assert len(stack.fake.requests) == 2
    shown = await recorded(stack, session, 4)
    kept = [(m["role"], m["text"]) for m in shown["recent"]]
    assert [role for role, _ in kept] == ["user", "assistant", "user", "assistant"]
    assert kept[1][1] and STORY.startswith(kept[1][1]) and kept[3][1] == SHORT


async def test_steer_interrupt_typed_in_the_conversation_chooses_it(stack: Stack) -> None:
    await stack.start_worker()
    async with stack.client() as client:
        session = await stack.session(client)
        changed = await send(client, session, "/steer interrupt")
        shown = await send(client, session, "/steer")
        await interrupted(stack, client, session)
    assert texts(changed) == INTERRUPT_SAID and changed[-1]["type"] == "completed"
    assert texts(shown).startswith("Here a message you send while I work stops what I am doing")
    assert len(stack.fake.requests) == 2  # the commands reached no model


async def waiting(stack: Stack, session: str, count: int) -> None:
    """Until `count` envelopes wait in the session's inbox (the running turn's among them)."""
    redis = Redis.from_url(stack.redis_url)
    inbox = keys.session(place.session_key(session), "inbox")
    try:
        await until(lambda: _length(redis, inbox, count), f"{count} envelopes in the inbox")
    finally:
        await redis.aclose()


async def _length(redis: Redis, inbox: str, count: int) -> bool:
    return int(await done(redis.llen(inbox))) == count


async def test_in_queue_the_turn_finishes_and_the_message_is_answered_after(
    stack: Stack,
) -> None:
    await stack.start_worker()
    gate = asyncio.Event()
    async with stack.client() as client:
        session = await stack.session(client)
        changed = await send(client, session, "/steer queue")
        stack.fake.enqueue(held_story(gate), Reply(text=SHORT))
        streaming = asyncio.Event()
        first = asyncio.create_task(posting(client, session, ASKED, streaming))
        try:
            await asyncio.wait_for(streaming.wait(), 30)  # sent together, they would merge
            then = asyncio.create_task(posting(client, session, THEN))
            await waiting(stack, session, 2)
            await asyncio.sleep(0.3)  # held: a stop would come now
            gate.set()
            story, second = await asyncio.wait_for(asyncio.gather(first, then), 30)
        finally:
            gate.set()
            first.cancel()
    assert texts(changed) == QUEUE_SAID
    assert (story[-1]["finish_reason"], texts(story)) == ("end_turn", STORY)
    assert (second[-1]["finish_reason"], texts(second)) == ("end_turn", SHORT)
    asked_first, asked_then = stack.fake.requests
    assert THEN not in said_to_model(asked_first)
    assert said_to_model(asked_then).count(THEN) == 1
    assert assistant_texts(asked_then)[-1] == STORY
