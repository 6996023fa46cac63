"""The voice reply settings: each bad value one line naming its variable, OpenAI's endpoint
refused at start without a key, its key never sent to another endpoint, and what a process
warns about: no ffmpeg to convert an answer that is not Opus, and replies meant to be said
with no speech model to say them."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config.settings import load_settings
from bot.config.warnings import settings_warnings
from tests.config.refusals import refusal


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"PARLEY_SPEECH_BASE_URL": "kokoro.local"},
         "PARLEY_SPEECH_BASE_URL: not an http(s) URL, e.g. https://api.example.com/v1"),
        ({"PARLEY_SPEECH_MAX_CHARS": "5000"},
         "PARLEY_SPEECH_MAX_CHARS: Input should be less than or equal to 4096"),
        ({"PARLEY_SPEECH_VOICE": "v" * 101},
         "PARLEY_SPEECH_VOICE: String should have at most 100 characters"),
        ({"PARLEY_VOICE_REPLIES": "always"},
         "PARLEY_VOICE_REPLIES: Input should be 'off', 'on' or 'spoken'"),
        ({"PARLEY_SPEECH_MODEL": "tts-1"},
         "PARLEY_SPEECH_API_KEY: OpenAI's speech endpoint needs a key (or set "
         "OPENAI_API_KEY, or PARLEY_SPEECH_BASE_URL for another endpoint)"),
    ],
)  # fmt: skip
def test_a_bad_value_is_one_line_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str
) -> None:
    assert refusal(monkeypatch, env) == expected


def test_openais_key_goes_to_openais_endpoint_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv("PARLEY_SPEECH_MODEL", "kokoro")
    monkeypatch.setenv("PARLEY_SPEECH_BASE_URL", "http://127.0.0.1:8880/v1")
    assert load_settings(_env_file=None).speech_key is None
    monkeypatch.delenv("PARLEY_SPEECH_BASE_URL")
    key = load_settings(_env_file=None).speech_key
    assert key is not None and key.get_secret_value() == "sk-openai"


def test_what_a_process_warns_about(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    speaking = load_settings(_env_file=None, speech_model="tts-1", speech_api_key="k")
    assert settings_warnings(speaking, {}, None) == []  # this machine has ffmpeg
    monkeypatch.setenv("PATH", str(tmp_path))
    [line] = settings_warnings(speaking, {}, None)
    assert line.startswith("PARLEY_SPEECH_MODEL is set but ffmpeg is not installed")
    monkeypatch.undo()
    [line] = settings_warnings(load_settings(_env_file=None, voice_replies="spoken"), {}, None)
    assert line == (
        "PARLEY_VOICE_REPLIES is spoken but PARLEY_SPEECH_MODEL is unset: no reply is said aloud"
    )
    assert settings_warnings(load_settings(_env_file=None), {}, None) == []
