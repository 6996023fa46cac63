"""The transcription settings: each bad value one line naming its variable, and OpenAI's
endpoint refused at start without a key rather than at every voice note."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config.settings import load_settings
from bot.config.warnings import settings_warnings
from tests.config.refusals import refusal


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"PARLEY_TRANSCRIBE_BASE_URL": "whisper.local"},
         "PARLEY_TRANSCRIBE_BASE_URL: not an http(s) URL, e.g. https://api.example.com/v1"),
        ({"PARLEY_TRANSCRIBE_TIMEOUT": "0"},
         "PARLEY_TRANSCRIBE_TIMEOUT: Input should be greater than 0"),
        ({"PARLEY_TRANSCRIBE_MAX_SECONDS": "an hour"},
         "PARLEY_TRANSCRIBE_MAX_SECONDS: Input should be a valid integer, unable to parse "
         "string as an integer"),
        ({"PARLEY_TRANSCRIBE_MODEL": "whisper-1"},
         "PARLEY_TRANSCRIBE_API_KEY: OpenAI's transcription endpoint needs a key (or set "
         "OPENAI_API_KEY, or PARLEY_TRANSCRIBE_BASE_URL for another endpoint)"),
    ],
)  # fmt: skip
def test_a_bad_value_is_one_line_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str
) -> None:
    assert refusal(monkeypatch, env) == expected


def test_a_local_endpoint_needs_no_key_and_openais_takes_openais(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("PARLEY_TRANSCRIBE_MODEL", "Systran/faster-whisper-small")
    monkeypatch.setenv("PARLEY_TRANSCRIBE_BASE_URL", "http://127.0.0.1:8000/v1")
    assert load_settings(_env_file=None).transcription_key is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    assert load_settings(_env_file=None).transcription_key is None  # not sent elsewhere
    monkeypatch.delenv("PARLEY_TRANSCRIBE_BASE_URL")
    key = load_settings(_env_file=None).transcription_key
    assert key is not None and key.get_secret_value() == "sk-openai"


def test_no_ffmpeg_for_voice_notes_is_one_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = load_settings(_env_file=None, transcribe_model="whisper-1", transcribe_api_key="k")
    assert settings_warnings(settings, {}, None) == []  # this machine has ffmpeg
    monkeypatch.setenv("PATH", str(tmp_path))
    [line] = settings_warnings(settings, {}, None)
    assert line.startswith("PARLEY_TRANSCRIBE_MODEL is set but ffmpeg is not installed")
    assert settings_warnings(load_settings(_env_file=None), {}, None) == []
