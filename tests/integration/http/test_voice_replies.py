"""Replies said aloud through the HTTP API, end to end: the real web app and worker, Redis, the
fake model, and the fake speech endpoint answering the real `openai` SDK. `/voice on`, posted
as a message, is answered at once as a streamed turn; the next answer is said aloud once it is
whole and comes as a `file` event (`call_id` "voice", `audio/ogg`, `voice_seconds` its length)
after its text, on the turn's own stream before `completed` (docs/API.md: "always `completed`
last") and on the session's; `GET /api/files/{sha256}`, with the API's token, serves the Opus
in Ogg. With the defaults, `/voice on` says voice replies are not set up and nothing is said.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from adapters.chat.voice_commands import NOT_SET_UP
from adapters.http.place import TOKEN_HOLDER, session_key
from bot.files.audio import opus_seconds
from bot.people.limits import day
from bot.redis import keys
from bot.session.voice import CALL_ID, NAME, speakable
from bot.telemetry import metrics
from tests.fakes.llm import Reply
from tests.fakes.llm.speech import kind_of
from tests.support.stack import Stack, idle, send, texts
from tests.support.waiting import WITHIN, until

pytestmark = pytest.mark.e2e
TOKEN = "s3cret-token"
SPEECH = {"speech": "1", "PARLEY_API_TOKEN": TOKEN}
ANSWER = (
    "Lisbon is the **capital** of Portugal. See [its page](https://example.org/lisbon).\n\n"
    "```sh\ncurl example.org\n```\nIt sits on the Tagus."
)
SAID = "Lisbon is the capital of Portugal. See its page. It sits on the Tagus."
ON = "From now on I answer you in text and with a voice note."


async def voice_charges(stack: Stack, person: str) -> list[int]:
    """What the person's day was charged for each reply said aloud."""
    redis = Redis.from_url(stack.redis_url)
    try:
        charged = await redis.hgetall(keys.limit(person, f"tokens:{day(datetime.now(UTC))}"))
    finally:
        await redis.aclose()
    return [int(value) for field, value in charged.items() if field.startswith(b"turn:voice:")]


async def recorded_answer(client: httpx.AsyncClient, session: str) -> dict[str, Any]:
    """The session's last message as `GET /api/sessions/{id}` shows it, once the turn's
    answer is recorded."""
    last: list[dict[str, Any]] = []

    async def written() -> bool:
        detail = (await client.get(f"/api/sessions/{session}")).json()
        last[:] = detail.get("recent", [])[-1:]
        return bool(last) and last[0]["role"] == "assistant" and not detail["running"]

    await until(written, f"the answer in {session} recorded")
    return last[0]


def authorised(stack: Stack) -> httpx.AsyncClient:
    return stack.client(headers={"Authorization": f"Bearer {TOKEN}"})


def is_voice(event: dict[str, Any]) -> bool:
    return bool(event["type"] == "file" and event["call_id"] == CALL_ID)


def kinds(events: list[dict[str, Any]]) -> list[str]:
    """The events' types, a voice note's as `voice`."""
    return ["voice" if is_voice(event) else event["type"] for event in events]


async def chose_voice(client: httpx.AsyncClient, session: str) -> None:
    """`/voice on`, answered at once as a streamed turn of its own."""
    answer = await send(client, session, "/voice on")
    assert kinds(answer) == ["text_delta", "completed"]
    assert answer[0]["text"] == ON and answer[1]["text"] == ON


async def followed(client: httpx.AsyncClient, session: str) -> list[dict[str, Any]]:
    """The session's events from its start (`GET …/events`, `Last-Event-ID: 0-0`), until
    both a voice note's `file` event and `completed` came, in whichever order."""
    seen: list[dict[str, Any]] = []
    headers = {"Last-Event-ID": "0-0"}
    try:
        async with (
            asyncio.timeout(WITHIN),
            client.stream("GET", f"/api/sessions/{session}/events", headers=headers) as events,
        ):
            async for line in events.aiter_lines():
                if line.startswith("data: "):
                    seen.append(json.loads(line[6:]))
                    if {"voice", "completed"} <= set(kinds(seen)):
                        return seen
    except TimeoutError:
        pass
    raise AssertionError(f"no voice note and end on the session's stream, only {kinds(seen)}")


@pytest.mark.parametrize("stack", [SPEECH], indirect=True)
async def test_the_said_answer_is_a_voice_file_event_served_as_ogg_opus(stack: Stack) -> None:
    """What the session's stream carries and the files endpoint serves (the turn's own
    stream is the next test's)."""
    await stack.start_worker()
    speech = stack.fake.speech
    sent = metrics.VOICE_REPLIES.labels("http", "sent")
    before = sent._value.get()
    stack.fake.enqueue(Reply(text=ANSWER))
    async with authorised(stack) as client:
        session = await stack.session(client)
        await chose_voice(client, session)
        posted = await send(client, session, "Where is Lisbon?")
        events = await followed(client, session)
        [voice] = [event for event in events if is_voice(event)]
        async with stack.client() as stranger:
            refused = await stranger.get(voice["url"])
        served = await client.get(voice["url"])
    assert texts(posted) == ANSWER == texts(events)  # the text, whole
    order = kinds(events)
    assert order.index("voice") > max(i for i, kind in enumerate(order) if kind == "text_delta")
    assert order.count("voice") == order.count("completed") == 1
    file = voice["file"]
    assert (file["media_type"], file["name"], voice["caption"]) == ("audio/ogg", NAME, "")
    assert voice["url"] == f"/api/files/{file['sha256']}"
    [said] = speech.requests
    assert said.body == {
        "model": "gpt-4o-mini-tts", "voice": "alloy", "input": SAID, "response_format": "opus",
    }  # fmt: skip
    assert speakable(ANSWER, 1500) == SAID
    assert voice["voice_seconds"] > 0
    assert abs(voice["voice_seconds"] - said.milliseconds / 1000) < 0.2
    assert refused.status_code == 401  # the file is behind the API's token
    assert served.status_code == 200
    data = served.content
    assert (len(data), hashlib.sha256(data).hexdigest()) == (file["size"], file["sha256"])
    assert kind_of(data) == "opus"
    assert opus_seconds(data) == pytest.approx(voice["voice_seconds"], abs=0.01)
    assert sent._value.get() == before + 1

    async def charged() -> bool:
        return bool(await voice_charges(stack, TOKEN_HOLDER))

    await until(charged, "the voice reply charged to the caller's day")
    assert await voice_charges(stack, TOKEN_HOLDER) == [len(SAID)]  # a token a character
    async with authorised(stack) as client:
        answer = await recorded_answer(client, session)
    assert answer["text"] == ANSWER and answer["voice"] == file  # kept with its message


@pytest.mark.parametrize("stack", [SPEECH], indirect=True)
async def test_the_turns_own_stream_carries_the_voice_note_before_completed(stack: Stack) -> None:
    """The stream a client gets for its message ends at `completed`: the voice note must come
    before it (after the answer's text), or the client, and the web chat, never see it."""
    await stack.start_worker()
    stack.fake.enqueue(Reply(text=ANSWER))
    async with authorised(stack) as client:
        session = await stack.session(client)
        await chose_voice(client, session)
        posted = await send(client, session, "Where is Lisbon?")
    order = kinds(posted)
    assert "voice" in order, f"the turn's stream carried no voice note, only {order}"
    assert order[-1] == "completed" and order.count("voice") == 1
    assert order.index("voice") > max(i for i, kind in enumerate(order) if kind == "text_delta")
    [said] = stack.fake.speech.requests
    [voice] = [event for event in posted if is_voice(event)]
    assert abs(voice["voice_seconds"] - said.milliseconds / 1000) < 0.2


async def test_with_the_defaults_voice_is_not_set_up_and_nothing_is_said(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="Just text."))
    async with stack.client() as client:
        session = await stack.session(client)
        answer = await send(client, session, "/voice on")
        posted = await send(client, session, "hi")
    assert kinds(answer) == ["text_delta", "completed"] and answer[0]["text"] == NOT_SET_UP
    assert texts(posted) == "Just text." and "file" not in kinds(posted)
    await idle(stack.redis_url)  # the turn is over: a voice note would have been written
    redis = Redis.from_url(stack.redis_url)
    try:
        written = await redis.xrange(keys.events(session_key(session)))
    finally:
        await redis.aclose()
    on_stream = [json.loads(fields[b"event"])["type"] for _, fields in written]
    assert "completed" in on_stream and "file" not in on_stream
    assert stack.fake.speech.requests == []
