"""The fake transcription endpoint, driven by the real `openai` SDK and by raw multipart
requests: a scripted transcript in each response format, and OpenAI's 400 (or 401) with its
error body for a bad name, bytes that are no sound, a missing or unknown field, a wrong key."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import openai
import pytest

from tests.fakes.llm import OPENAI_KEY, FakeLLM
from tests.support.audio import tone


@pytest.fixture
async def client(fake_llm: FakeLLM) -> AsyncIterator[openai.AsyncOpenAI]:
    sdk = openai.AsyncOpenAI(api_key=OPENAI_KEY, base_url=fake_llm.openai_base_url, max_retries=0)
    yield sdk
    await sdk.close()


async def test_a_scripted_transcript_in_each_format(
    fake_llm: FakeLLM, client: openai.AsyncOpenAI
) -> None:
    note = tone("ogg")
    fake_llm.transcriptions.script(note, "Hello.")
    heard = await client.audio.transcriptions.create(file=("a.ogg", note), model="whisper-1")
    assert heard.text == "Hello."
    text = await client.audio.transcriptions.create(
        file=("a.ogg", note), model="whisper-1", response_format="text", language="en"
    )
    assert text.strip() == "Hello."
    [first, second] = fake_llm.transcriptions.requests
    assert (first.filename, first.data, first.fields) == ("a.ogg", note, {"model": "whisper-1"})
    assert second.fields == {"model": "whisper-1", "response_format": "text", "language": "en"}
    other = await client.audio.transcriptions.create(file=("b.mp3", tone("mp3")), model="m")
    assert other.text == fake_llm.transcriptions.default(fake_llm.transcriptions.requests[2].sha256)


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [("a.aac", b"\xff\xf1" + bytes(100), "Invalid file format"),
     ("a.ogg", b"%PDF-1.7 not a sound", "could not be decoded"),
     ("a.mp3", b"OggS" + bytes(100), "could not be decoded")],
)  # fmt: skip
async def test_what_is_not_a_sound_it_takes_is_a_400(
    fake_llm: FakeLLM, client: openai.AsyncOpenAI, name: str, data: bytes, said: str
) -> None:
    with pytest.raises(openai.BadRequestError, match=said) as caught:
        await client.audio.transcriptions.create(file=(name, data), model="whisper-1")
    assert caught.value.status_code == 400 and caught.value.type == "invalid_request_error"
    assert fake_llm.transcriptions.requests == []


async def test_missing_and_unknown_fields_and_a_wrong_key(fake_llm: FakeLLM) -> None:
    url = fake_llm.openai_base_url + "/audio/transcriptions"
    sound = {"file": ("a.ogg", tone("ogg"), "audio/ogg")}
    auth = {"Authorization": f"Bearer {OPENAI_KEY}"}
    async with httpx.AsyncClient() as http:
        no_model = await http.post(url, files=sound, headers=auth)
        only_model = b'--b\r\nContent-Disposition: form-data; name="model"\r\n\r\nw\r\n--b--\r\n'
        form = {**auth, "Content-Type": "multipart/form-data; boundary=b"}
        no_file = await http.post(url, content=only_model, headers=form)
        unknown = await http.post(url, data={"model": "w", "speed": "2"}, files=sound, headers=auth)
        as_json = await http.post(url, json={"model": "w"}, headers=auth)
        wrong_key = await http.post(url, data={"model": "w"}, files=sound)
    assert no_model.json()["error"]["message"] == "you must provide a model parameter"
    assert no_file.json()["error"]["message"] == "you must provide a file"
    assert unknown.json()["error"]["message"] == "Unrecognized request argument supplied: speed"
    assert as_json.status_code == 400 and "multipart/form-data" in as_json.text
    assert wrong_key.status_code == 401
    assert fake_llm.transcriptions.requests == []
