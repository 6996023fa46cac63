"""The fake text-to-speech endpoint, driven by the real `openai` SDK and by raw JSON requests:
real audio of each format that ffmpeg decodes and whose length follows the text, streamed in
chunks; OpenAI's 400 with its error body for a missing, unknown or out-of-range field; the
scripted failures as the SDK's exceptions; a wrong key; a format forced on every answer."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import openai
import pytest

from tests.fakes.llm import OPENAI_KEY, FakeLLM
from tests.fakes.llm import speech as speech_module
from tests.fakes.llm.speech import FORMATS, kind_of, milliseconds

SHORT, LONG = "Hello there.", "A much longer sentence, that takes a good while to say aloud."
GOOD = {"model": "gpt-4o-mini-tts", "input": "Hi.", "voice": "coral"}


@pytest.fixture
async def client(fake_llm: FakeLLM) -> AsyncIterator[openai.AsyncOpenAI]:
    sdk = openai.AsyncOpenAI(api_key=OPENAI_KEY, base_url=fake_llm.openai_base_url, max_retries=0)
    yield sdk
    await sdk.close()


def seconds(data: bytes, kind: str) -> float:
    """How long `data` lasts, as ffmpeg decodes it to 24 kHz mono samples."""
    raw = ("-f", "s16le", "-ar", "24000", "-ac", "1") if kind == "pcm" else ()
    command = ["ffmpeg", "-nostdin", "-v", "error", *raw, "-i", "pipe:0",
               "-f", "s16le", "-ar", "24000", "-ac", "1", "pipe:1"]  # fmt: skip
    decoded = subprocess.run(command, input=data, capture_output=True, check=True, timeout=60)
    return len(decoded.stdout) / 2 / 24_000


def looks_like(data: bytes, kind: str) -> bool:
    """The signature each format starts with, checked byte by byte."""
    if kind == "opus":
        return data[:4] == b"OggS" and data[28:36] == b"OpusHead"
    if kind == "wav":
        return data[:4] == b"RIFF" and data[8:12] == b"WAVE"
    if kind == "flac":
        return data[:4] == b"fLaC"
    if kind == "mp3":
        return data[:3] == b"ID3" or (data[0] == 0xFF and data[1] >> 5 == 0b111)
    if kind == "aac":
        return data[0] == 0xFF and data[1] >> 4 == 0xF and (data[1] >> 1) & 0b11 == 0
    return len(data) % 2 == 0  # pcm: whole 16-bit samples


@pytest.mark.parametrize("kind", FORMATS)
async def test_each_format_is_real_audio_whose_length_follows_the_text(
    fake_llm: FakeLLM, client: openai.AsyncOpenAI, kind: Any
) -> None:
    short = await client.audio.speech.create(
        model="tts-1", input=SHORT, voice="alloy", response_format=kind
    )
    long = await client.audio.speech.create(
        model="tts-1", input=LONG, voice="alloy", response_format=kind
    )
    assert short.response.headers["content-type"] == speech_module.CONTENT_TYPES[kind]
    assert looks_like(short.content, kind) and looks_like(long.content, kind)
    assert kind_of(short.content) == kind_of(long.content) == kind
    heard = seconds(short.content, kind), seconds(long.content, kind)
    assert heard[0] == pytest.approx(milliseconds(SHORT) / 1000, abs=0.12)
    assert heard[1] == pytest.approx(milliseconds(LONG) / 1000, abs=0.12)
    assert heard[1] > heard[0] + 2
    assert [said.text for said in fake_llm.speech.requests] == [SHORT, LONG]
    assert fake_llm.speech.rejected == []


async def test_the_answer_streams_in_chunks(fake_llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    async with client.audio.speech.with_streaming_response.create(
        model="tts-1", input="x" * 600, voice="nova", response_format="wav", speed=1.5
    ) as answer:
        assert answer.headers["transfer-encoding"] == "chunked"
        chunks = [chunk async for chunk in answer.iter_bytes(4096)]
    data = b"".join(chunks)
    assert len(chunks) > 1 and kind_of(data) == "wav"
    assert seconds(data, "wav") == pytest.approx(20.0)  # 600 characters at 1.5 times the pace
    [said] = fake_llm.speech.requests
    assert (said.voice, said.response_format, said.milliseconds) == ("nova", "wav", 20_000)
    assert said.body["speed"] == 1.5


def test_the_length_is_bounded() -> None:
    assert milliseconds("a") == 500
    assert milliseconds("a" * 4096) == 30_000
    assert milliseconds("a" * 100, speed=0.5) == 10_000


async def test_a_shape_is_encoded_once_and_prepare_encodes_ahead(
    fake_llm: FakeLLM, client: openai.AsyncOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    encodings: list[tuple[str, int]] = []
    real = speech_module.encode

    async def counted(kind: str, ms: int) -> bytes:
        encodings.append((kind, ms))
        return await real(kind, ms)

    monkeypatch.setattr(speech_module, "encode", counted)
    monkeypatch.setattr(speech_module, "ENCODED", {})

    async def ask() -> bytes:
        answer = await client.audio.speech.create(
            model="tts-1", input="o" * 37, voice="echo", response_format="opus"
        )
        return answer.content

    together = await asyncio.gather(ask(), ask(), ask())
    again = await ask()
    assert encodings == [("opus", 1850)]
    assert {*together, again} == {together[0]} and kind_of(again) == "opus"
    await fake_llm.speech.prepare(["flac"], [1234])
    assert encodings == [("opus", 1850), ("flac", 1234)]
    ready = await fake_llm.speech.audio("flac", 1234)
    assert kind_of(ready) == "flac" and len(encodings) == 2  # taken from what prepare kept


async def post(fake: FakeLLM, body: Any, key: str = OPENAI_KEY) -> httpx.Response:
    url = fake.openai_base_url + "/audio/speech"
    async with httpx.AsyncClient() as http:
        if isinstance(body, bytes):
            return await http.post(url, content=body, headers={"Authorization": f"Bearer {key}"})
        return await http.post(url, json=body, headers={"Authorization": f"Bearer {key}"})


def without(name: str) -> dict[str, Any]:
    return {k: v for k, v in GOOD.items() if k != name}


REFUSED: list[tuple[Any, str]] = [
    (without("voice"), "Missing required parameter: 'voice'."),
    (without("input"), "Missing required parameter: 'input'."),
    (without("model"), "Missing required parameter: 'model'."),
    ({**GOOD, "model": ""}, "you must provide a model parameter"),
    ({**GOOD, "model": 4}, "Invalid type for 'model': expected a string, but got an integer"),
    ({**GOOD, "voice": "bob"}, "Invalid value for 'voice': 'bob'. Supported values are: 'alloy'"),
    ({**GOOD, "voice": {"id": "voice_1"}}, "the fake has no custom voices"),
    ({**GOOD, "input": "x" * 4097}, "maximum length 4096, but got a string with length 4097"),
    ({**GOOD, "input": ""}, "Invalid 'input': string too short."),
    ({**GOOD, "input": ["Hi."]}, "Invalid type for 'input': expected a string, but got an array"),
    ({**GOOD, "speed": 0.2}, "Invalid 'speed': decimal below minimum value."),
    ({**GOOD, "speed": 4.5}, "Invalid 'speed': decimal above maximum value."),
    ({**GOOD, "speed": "fast"}, "Invalid type for 'speed': expected a decimal, but got a string"),
    ({**GOOD, "speed": True}, "Invalid type for 'speed': expected a decimal, but got a boolean"),
    ({**GOOD, "response_format": "ogg"}, "Invalid value for 'response_format': 'ogg'."),
    ({**GOOD, "instructions": "y" * 4097}, "Invalid 'instructions': string too long."),
    ({**GOOD, "stream_format": "sse"}, "the fake does not stream speech events"),
    ({**GOOD, "stream_format": "chunks"}, "Invalid value for 'stream_format': 'chunks'."),
    ({**GOOD, "pitch": 2}, "Unrecognized request argument supplied: pitch"),
    (b"{not json", "We could not parse the JSON body of your request."),
    ([GOOD], "The request body must be a JSON object."),
]


@pytest.mark.parametrize(("body", "message"), REFUSED)
async def test_what_openai_refuses_is_a_400(fake_llm: FakeLLM, body: Any, message: str) -> None:
    answer = await post(fake_llm, body)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["type"] == "invalid_request_error" and message in error["message"]
    assert fake_llm.speech.rejected == [error["message"]]
    assert fake_llm.speech.requests == []


async def test_optional_fields_may_be_null_or_set(fake_llm: FakeLLM) -> None:
    nulls = {**GOOD, "speed": None, "instructions": None, "response_format": None}
    assert (await post(fake_llm, nulls)).headers["content-type"] == "audio/mpeg"
    every = {**GOOD, "speed": 4, "instructions": "Cheerful.", "stream_format": "audio",
             "response_format": "pcm"}  # fmt: skip
    answer = await post(fake_llm, every)
    assert answer.status_code == 200 and answer.headers["content-type"] == "audio/pcm"
    assert fake_llm.speech.rejected == [] and len(fake_llm.speech.requests) == 2


async def test_the_sdk_sees_the_refusals(fake_llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="Supported values are") as caught:
        await client.audio.speech.create(model="tts-1", input="Hi.", voice="bob")
    assert caught.value.status_code == 400 and caught.value.type == "invalid_request_error"
    with pytest.raises(openai.BadRequestError, match="does not stream speech events"):
        await client.audio.speech.create(
            model="gpt-4o-mini-tts", input="Hi.", voice="ash", stream_format="sse"
        )
    with pytest.raises(openai.BadRequestError, match="supplied: pitch"):
        await client.audio.speech.create(
            model="tts-1", input="Hi.", voice="ash", extra_body={"pitch": 2}
        )
    assert len(fake_llm.speech.rejected) == 3


@pytest.mark.parametrize(
    ("status", "error"),
    [(429, openai.RateLimitError), (500, openai.InternalServerError),
     (503, openai.InternalServerError), (404, openai.NotFoundError),
     (403, openai.PermissionDeniedError)],
)  # fmt: skip
async def test_failing_statuses_reach_the_sdk_as_their_exceptions(
    fake_llm: FakeLLM, client: openai.AsyncOpenAI, status: int, error: type[openai.APIStatusError]
) -> None:
    fake_llm.speech.failing.append(status)
    with pytest.raises(error) as caught:
        await client.audio.speech.create(model="tts-1", input="Hi.", voice="sage")
    assert caught.value.status_code == status
    body = caught.value.body
    assert isinstance(body, dict) and body["message"]
    if status == 429:
        assert body["code"] == "rate_limit_exceeded"
    after = await client.audio.speech.create(model="tts-1", input="Hi.", voice="sage")
    assert kind_of(after.content) == "mp3"
    assert len(fake_llm.speech.requests) == 2 and fake_llm.speech.failing == []


async def test_answer_format_overrides_what_was_asked(
    fake_llm: FakeLLM, client: openai.AsyncOpenAI
) -> None:
    fake_llm.speech.answer_format = "wav"
    answer = await client.audio.speech.create(
        model="tts-1", input=SHORT, voice="onyx", response_format="opus"
    )
    assert answer.response.headers["content-type"] == "audio/wav"
    assert kind_of(answer.content) == "wav" and answer.content[:4] == b"RIFF"
    assert fake_llm.speech.requests[0].response_format == "opus"


async def test_delay_holds_the_answer(fake_llm: FakeLLM, client: openai.AsyncOpenAI) -> None:
    await fake_llm.speech.prepare(["mp3"])
    fake_llm.speech.delay = 0.3
    started = time.monotonic()
    await client.audio.speech.create(model="tts-1", input="Hi.", voice="verse")
    assert time.monotonic() - started >= 0.3


async def test_a_wrong_key_is_a_401(fake_llm: FakeLLM) -> None:
    answer = await post(fake_llm, GOOD, key="sk-wrong")
    assert answer.status_code == 401 and answer.json()["error"]["code"] == "invalid_api_key"
    async with openai.AsyncOpenAI(
        api_key="sk-wrong", base_url=fake_llm.openai_base_url, max_retries=0
    ) as sdk:
        with pytest.raises(openai.AuthenticationError):
            await sdk.audio.speech.create(model="tts-1", input="Hi.", voice="alloy")
    assert fake_llm.speech.requests == [] and fake_llm.speech.rejected == []


def test_kind_of_tells_the_formats_apart() -> None:
    assert kind_of(b"\xff\xf1\x50\x80") == "aac"
    assert kind_of(b"\xff\xfb\x90\x00") == "mp3"
    assert kind_of(b"ID3\x04") == "mp3"
    assert kind_of(b"OggS" + bytes(24) + b"OpusHead") == "opus"
    assert kind_of(b"OggS" + bytes(24) + b"\x01vorbis") == "pcm"  # no format OpenAI answers
    assert kind_of(b"fLaC\x00") == "flac"
