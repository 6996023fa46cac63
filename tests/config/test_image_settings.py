"""The picture settings: `generate_image` is offered only where PARLEY_IMAGE_MODEL names a
model, each bad value is one line naming its variable, OpenAI's endpoint is refused at start
without a key, and OpenAI's key goes to OpenAI's endpoint alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.assembly.catalog import standard_tools
from bot.assembly.offered import offered_tools
from bot.config.settings import load_settings
from tests.config.refusals import refusal

KEY = "sk-image-from-a-file-5e2a"


def names(**overrides: str) -> set[str]:
    return {t.name for t in standard_tools(load_settings(_env_file=None, **overrides))}


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"PARLEY_IMAGE_BASE_URL": "images.local"},
         "PARLEY_IMAGE_BASE_URL: not an http(s) URL, e.g. https://api.example.com/v1"),
        ({"PARLEY_IMAGE_TIMEOUT": "0"}, "PARLEY_IMAGE_TIMEOUT: Input should be greater than 0"),
        ({"PARLEY_IMAGE_MODEL": "gpt-image-1"},
         "PARLEY_IMAGE_API_KEY: OpenAI's images endpoint needs a key (or set OPENAI_API_KEY, "
         "or PARLEY_IMAGE_BASE_URL for another endpoint)"),
        ({"PARLEY_IMAGE_MODEL": "gpt-image-1", "PARLEY_IMAGE_BASE_URL": "https://api.openai.com/v1"},
         "PARLEY_IMAGE_API_KEY: OpenAI's images endpoint needs a key (or set OPENAI_API_KEY, "
         "or PARLEY_IMAGE_BASE_URL for another endpoint)"),
    ],
)  # fmt: skip
def test_a_bad_value_is_one_line_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str
) -> None:
    assert refusal(monkeypatch, env) == expected


def test_the_tool_is_offered_only_where_a_model_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert "generate_image" not in names()
    local = {"image_model": "sdxl", "image_base_url": "http://127.0.0.1:7860/v1"}
    assert "generate_image" in names(**local)  # a local server needs no key
    configured = standard_tools(load_settings(_env_file=None, **local))
    assert "generate_image" not in {t.name for t in offered_tools(configured, sensitive=True)}
    [made] = [t for t in configured if t.name == "generate_image"]
    assert not made.read_only and not made.sensitive  # it makes something; the policy may ask


def test_a_local_endpoint_gets_no_key_and_openais_gets_openais(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("PARLEY_IMAGE_MODEL", "sdxl")
    monkeypatch.setenv("PARLEY_IMAGE_BASE_URL", "http://127.0.0.1:7860/v1")
    assert load_settings(_env_file=None).image_key is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    assert load_settings(_env_file=None).image_key is None  # not sent elsewhere
    monkeypatch.delenv("PARLEY_IMAGE_BASE_URL")
    key = load_settings(_env_file=None).image_key
    assert key is not None and key.get_secret_value() == "sk-openai"
    monkeypatch.setenv("PARLEY_IMAGE_API_KEY", "sk-own")
    key = load_settings(_env_file=None).image_key
    assert key is not None and key.get_secret_value() == "sk-own"


def test_the_key_may_be_a_file_and_stays_out_of_sight(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "image-key").write_text(KEY + "\n")
    monkeypatch.setenv("PARLEY_IMAGE_MODEL", "gpt-image-1")
    monkeypatch.setenv("PARLEY_IMAGE_API_KEY_FILE", str(tmp_path / "image-key"))
    settings = load_settings(_env_file=None)
    assert settings.image_key is not None and settings.image_key.get_secret_value() == KEY
    assert KEY not in repr(settings)
    [made] = [t for t in standard_tools(settings) if t.name == "generate_image"]
    assert KEY not in repr(made) and KEY not in str(made.spec)
