"""The transcriber through the real `openai` SDK against the fake endpoint: a transcript
kept in memory by its recording's hash so a recording is sent once, a failure one sentence
for the person and one line for the operator that never holds the key."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.config.settings import load_settings
from bot.files import audio, voice
from tests.fakes.llm import OPENAI_KEY, FakeLLM
from tests.support.audio import tone, voice_env

OGG = audio.OGG


def transcriber(fake: FakeLLM, tmp_path: Path, **env: str) -> voice.Transcriber:
    named = {name.removeprefix("PARLEY_").lower(): value for name, value in voice_env(fake).items()}
    settings = load_settings(_env_file=None, **{**named, **env})
    made = voice.transcriber(settings)
    assert made is not None
    return made


async def test_a_recording_heard_again_is_not_sent_again(fake_llm: FakeLLM, tmp_path: Path) -> None:
    note = tone("ogg", hz=700)
    fake_llm.transcriptions.script(note, "  Hello there.  ")
    heard = transcriber(fake_llm, tmp_path)
    try:
        assert await heard.transcript(note, OGG) == "Hello there."
        assert await heard.transcript(note, OGG) == "Hello there."
    finally:
        await heard.aclose()
    assert len(fake_llm.transcriptions.requests) == 1


async def test_a_refused_call_is_one_sentence_and_the_log_holds_no_key(
    fake_llm: FakeLLM, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "sk-wrong-" + "x" * 20
    heard = transcriber(fake_llm, tmp_path, transcribe_api_key=secret)
    caplog.set_level(logging.DEBUG)
    try:
        with pytest.raises(voice.NotHeard, match=f"^{voice.FAILED}$"):
            await heard.transcript(tone("ogg"), OGG)
    finally:
        await heard.aclose()
    assert "401" in caplog.text and secret not in caplog.text
    assert secret not in repr(heard.endpoint)


async def test_silence_and_a_length_past_the_limit_are_said(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    fake_llm.transcriptions.answer_any(" ")
    heard = transcriber(fake_llm, tmp_path, transcribe_max_seconds="60")
    try:
        with pytest.raises(voice.NotHeard, match=f"^{voice.SILENT}$"):
            await heard.transcript(tone("ogg"), OGG)
        with pytest.raises(voice.NotHeard, match=r"^That recording lasts 1 min 01 s; I "):
            heard.check_length([3.0, 61.0])
        heard.check_length([60.0, 0.0])  # 0: a length its platform did not say
    finally:
        await heard.aclose()


def test_the_key_goes_to_openai_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "PARLEY_TRANSCRIBE_API_KEY", "PARLEY_TRANSCRIBE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    at_openai = load_settings(
        _env_file=None, transcribe_model="whisper-1", openai_api_key=OPENAI_KEY,
        openai_base_url="http://llm.local/v1",  # the chat model's server: not for voice
    )  # fmt: skip
    endpoint = voice.Endpoint.of(at_openai)
    assert endpoint is not None
    assert (endpoint.base_url, endpoint.api_key) == (voice.OPENAI, OPENAI_KEY)
    local = at_openai.model_copy(update={"transcribe_base_url": "http://whisper.local/v1"})
    endpoint = voice.Endpoint.of(local)
    assert endpoint is not None and endpoint.api_key == "unused"
    assert voice.Endpoint.of(load_settings(_env_file=None)) is None
