"""Recordings posted with a message (`POST /api/sessions/{id}/messages`, base64 in JSON or a
multipart file part) are transcribed by the fake OpenAI endpoint through the real SDK: the
transcript is the turn's text for the model and the stream's first event (`heard`); where
no transcript can be had, a 422 says why and nothing is queued."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import pytest

from bot.files.voice import FAILED, MARK, NO_BACKEND
from tests.fakes.llm import RecordedRequest, Reply
from tests.support.audio import tone
from tests.support.stack import Stack, read_events, texts

pytestmark = pytest.mark.e2e
PATH = "/api/sessions/{}/messages"


def recording(data: bytes, name: str) -> dict[str, str]:
    return {"name": name, "media_type": "audio/ogg", "data": base64.b64encode(data).decode()}


def echo(request: RecordedRequest) -> Reply:
    return Reply(text="Told: " + request.last_user_text().split("\n", 1)[1].replace("\n", " | "))


async def streamed(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, await response.aread()
    return await read_events(response)


@pytest.mark.parametrize("stack", [{"voice": "1"}], indirect=True)
async def test_a_recording_in_json_and_in_a_form_is_heard_and_streamed_first(
    stack: Stack,
) -> None:
    await stack.start_worker()
    stack.fake.responder = echo
    heard = stack.fake.transcriptions
    note, wav = tone("ogg", hz=610), tone("wav", hz=630)
    heard.script(note, "What's the weather in Porto?")
    heard.script(wav, "And tomorrow?")
    async with stack.client() as client:
        session = await stack.session(client)
        body = {"text": "Please", "attachments": [recording(note, "note.ogg")]}
        async with client.stream("POST", PATH.format(session), json=body) as answer:
            first = await streamed(answer)
        files = [("file", ("memo.wav", wav, "audio/wav"))]
        async with client.stream("POST", PATH.format(session), files=files) as answer:
            second = await streamed(answer)
    assert first[0] == {"type": "heard", "text": "What's the weather in Porto?"}
    assert texts(first) == f"Told: Please |  | {MARK} | What's the weather in Porto?"
    assert second[0] == {"type": "heard", "text": "And tomorrow?"}
    assert texts(second) == f"Told: {MARK} | And tomorrow?"
    assert [(r.filename, r.data) for r in heard.requests] == [
        ("voice.ogg", note), ("voice.wav", wav),
    ]  # fmt: skip


@pytest.mark.parametrize("stack", [{"voice": "1"}], indirect=True)
async def test_a_recording_that_cannot_be_heard_is_a_422_and_nothing_is_queued(
    stack: Stack,
) -> None:
    await stack.start_worker()
    stack.fake.transcriptions.failing = [503, 503, 503]
    async with stack.client() as client:
        session = await stack.session(client)
        body = {"attachments": [recording(tone("ogg", hz=650), "note.ogg")]}
        failed = await client.post(PATH.format(session), json=body)
    assert failed.status_code == 422, failed.text
    assert failed.json()["problems"] == [f"attachments: {FAILED}"]
    assert stack.fake.requests == []


async def test_without_a_backend_a_recording_is_a_422_that_says_so(stack: Stack) -> None:
    """With the defaults: no transcription model is set."""
    await stack.start_worker()
    async with stack.client() as client:
        session = await stack.session(client)
        body = {"text": "hi", "attachments": [recording(tone("ogg"), "note.ogg")]}
        refused = await client.post(PATH.format(session), json=body)
    assert refused.status_code == 422, refused.text
    assert refused.json()["problems"] == [f"attachments: {NO_BACKEND}"]
    assert stack.fake.requests == [] and stack.fake.transcriptions.requests == []
