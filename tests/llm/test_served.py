"""The models a deployment serves: names and aliases, an allow list, the fallback chain, and
which API a name without its prefix goes to."""

from __future__ import annotations

import pytest

from bot.config.settings import ConfigError, Settings
from bot.llm.registry import ModelRef
from bot.llm.served import Served

BOTH = {"anthropic_api_key": "a", "openai_api_key": "o"}


def served(**values: object) -> Served:
    return Served.of(Settings(_env_file=None, model="claude-sonnet-4-5", **values))  # type: ignore[arg-type]


def test_without_a_list_the_apis_with_a_key_serve_any_of_their_models() -> None:
    only_claude = served(anthropic_api_key="a")
    assert only_claude.name("claude-haiku-4-5") == "claude-haiku-4-5"
    assert only_claude.name("gpt-4o") is None  # no OpenAI key
    assert only_claude.name("llama3") is None  # no API can be told from the name
    assert served(**BOTH).name("gpt-4o") == "gpt-4o"


def test_a_list_with_aliases_serves_what_it_names_and_the_default() -> None:
    listed = served(models=["fast=claude-haiku-4-5", "local=openai:llama3.1", "gpt-4o"], **BOTH)
    assert listed.name("fast") == "claude-haiku-4-5" and listed.name("local") == "llama3.1"
    assert listed.name("gpt-4o") == "gpt-4o" and listed.name("claude-sonnet-4-5")
    assert listed.name("claude-opus-4-1") is None  # a model of a served API, but not listed
    assert listed.name("openai:gpt-4o") == "gpt-4o"
    assert listed.name("anthropic:gpt-4o") is None  # the list's gpt-4o is OpenAI's
    assert listed.ref("llama3.1") == ModelRef("openai", "llama3.1")  # its prefix, found again
    assert "local (llama3.1)" in listed.sentence()


def test_the_fallback_chain_takes_names_and_aliases_and_its_keys_are_checked() -> None:
    chain = served(models=["fast=claude-haiku-4-5"], fallback_models=["fast", "gpt-4o"], **BOTH)
    assert chain.fallbacks == ("claude-haiku-4-5", "gpt-4o")
    assert chain.name("gpt-4o") == "gpt-4o"  # a fallback is served too
    with pytest.raises(ConfigError, match=r"^OPENAI_API_KEY: not set, and model 'gpt-4o'"):
        served(fallback_models=["gpt-4o"], anthropic_api_key="a").check()
    with pytest.raises(ConfigError, match=r"^PARLEY_FALLBACK_MODELS: cannot tell which API"):
        served(fallback_models=["mystery"], **BOTH)
