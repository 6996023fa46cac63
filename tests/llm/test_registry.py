from __future__ import annotations

import pytest

from bot.config.settings import ConfigError, Settings
from bot.llm.registry import ModelRef, check_provider, context_window, resolve_model


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("claude-sonnet-4-5", ModelRef("anthropic", "claude-sonnet-4-5")),
        ("gpt-4o-mini", ModelRef("openai", "gpt-4o-mini")),
        ("o1", ModelRef("openai", "o1")),
        ("o3-mini", ModelRef("openai", "o3-mini")),
        ("o4-mini", ModelRef("openai", "o4-mini")),
        ("openai/gpt-4o", ModelRef("openai", "openai/gpt-4o")),
        ("openai:qwen2.5:7b", ModelRef("openai", "qwen2.5:7b")),
        ("anthropic:my-proxy-model", ModelRef("anthropic", "my-proxy-model")),
    ],
)
def test_provider_from_model_name(spec: str, expected: ModelRef) -> None:
    assert resolve_model(spec) == expected


@pytest.mark.parametrize("spec", ["llama3", "mistral-large", "anthropic:", "foo:bar"])
def test_unknown_model_is_a_clear_error(spec: str) -> None:
    with pytest.raises(ConfigError, match="PARLEY_MODEL"):
        resolve_model(spec)


def test_context_window_known_default_and_override() -> None:
    assert context_window(Settings(), "claude-sonnet-4-5") == 200_000
    assert context_window(Settings(), "openrouter/gpt-4o") == 128_000
    assert context_window(Settings(), "qwen2.5") == 128_000
    assert context_window(Settings(context_window=32_000), "claude-sonnet-4-5") == 32_000


def test_a_temperature_anthropic_does_not_take_is_one_line_naming_it() -> None:
    claude = Settings(_env_file=None, anthropic_api_key="k", temperature=1.5)
    with pytest.raises(ConfigError, match=r"^PARLEY_TEMPERATURE: 1\.5, but Anthropic's models"):
        check_provider(claude, resolve_model("claude-sonnet-4-5"))
    gpt = Settings(_env_file=None, openai_api_key="k", temperature=1.5)
    check_provider(gpt, resolve_model("gpt-4o"))  # OpenAI's go to 2
