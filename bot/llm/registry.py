"""Which provider serves a model name, and how large its context window is.

Each provider's module is imported only when the configured model needs it: an API's SDK
takes up to a second to import (anthropic about 1 s, openai about 0.6 s), and a worker's
start-up is also its recovery time whenever one is replaced. `PROVIDERS` is the one place
that names those modules.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from bot.config.settings import ConfigError, Settings
from bot.config.values import keys_of
from bot.files.store import FileStore
from bot.llm.base import Provider
from bot.llm.keyring import KeyCount, KeyRing, uncounted
from bot.llm.media import FileReader


class ProviderClass(Protocol):
    """How the registry builds every provider."""

    def __call__(
        self, *, api_key: str, base_url: str | None, timeout: float, files: FileReader | None
    ) -> Provider: ...


# Provider name -> "module:class", imported on first use.
PROVIDERS = {
    "anthropic": "bot.llm.anthropic:AnthropicProvider",
    "openai": "bot.llm.openai:OpenAIProvider",
}

if TYPE_CHECKING:  # mypy checks that each class fits, without importing an SDK at run time
    from bot.llm.anthropic import AnthropicProvider
    from bot.llm.openai import OpenAIProvider

    _CLASSES: tuple[ProviderClass, ...] = (AnthropicProvider, OpenAIProvider)
_KEYWORDS = (
    (re.compile(r"claude", re.I), "anthropic"),
    (re.compile(r"(^|[/:-])(gpt|o1|o3|o4|chatgpt)", re.I), "openai"),
)
# Known context windows in tokens, by model name prefix; the first match wins.
_WINDOWS = (
    ("claude", 200_000),
    ("gpt-4.1", 1_000_000),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4", 200_000),
)
DEFAULT_WINDOW = 128_000


@dataclass(frozen=True)
class ModelRef:
    provider: str
    model: str


def resolve_model(spec: str) -> ModelRef:
    """`anthropic:NAME` or `openai:NAME` decide explicitly; otherwise the name's keyword does."""
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in PROVIDERS:
        if not rest:
            raise ConfigError(f"PARLEY_MODEL: {spec!r} names a provider but no model")
        return ModelRef(prefix, rest)
    for pattern, provider in _KEYWORDS:
        if pattern.search(spec):
            return ModelRef(provider, spec)
    raise ConfigError(
        f"PARLEY_MODEL: cannot tell which API serves {spec!r}; "
        "write it as anthropic:NAME or openai:NAME (openai: also covers compatible servers)"
    )


def context_window(settings: Settings, model: str) -> int:
    if settings.context_window:
        return settings.context_window
    name = model.rsplit("/", 1)[-1].lower()
    return next((size for prefix, size in _WINDOWS if name.startswith(prefix)), DEFAULT_WINDOW)


def provider_class(name: str) -> ProviderClass:
    """The class of provider `name` (a key of `PROVIDERS`), importing its module now."""
    module, _, attribute = PROVIDERS[name].partition(":")
    return cast(ProviderClass, getattr(importlib.import_module(module), attribute))


def check_provider(settings: Settings, ref: ModelRef) -> None:
    """A ConfigError naming the key `ref`'s provider needs and lacks; imports no SDK."""
    if ref.provider == "anthropic":
        if not keys_of(settings.anthropic_api_key):
            raise ConfigError(
                f"ANTHROPIC_API_KEY: not set, and model {ref.model!r} needs it "
                "(set it in the environment or in .env)"
            )
        if settings.temperature is not None and settings.temperature > 1:
            raise ConfigError(
                f"PARLEY_TEMPERATURE: {settings.temperature:g}, but Anthropic's models "
                f"(such as {ref.model!r}) take 0 to 1"
            )
    elif settings.openai_api_key is None and settings.openai_base_url is None:
        raise ConfigError(
            f"OPENAI_API_KEY: not set, and model {ref.model!r} needs it "
            "(set it in the environment or in .env, or point OPENAI_BASE_URL at a local server)"
        )


def build_provider(settings: Settings, ref: ModelRef, count: KeyCount = uncounted) -> Provider:
    """The provider for `ref`, or a ConfigError naming the missing key; over several keys
    where its setting holds them (`bot.llm.keyring`), each call told to `count`."""
    check_provider(settings, ref)
    files = FileStore(settings.files_dir)
    kind = provider_class(ref.provider)
    if ref.provider == "anthropic":
        keys, base_url = keys_of(settings.anthropic_api_key), settings.anthropic_base_url
    else:  # local OpenAI-compatible servers (Ollama, llama.cpp) accept any key
        keys, base_url = keys_of(settings.openai_api_key) or ["unused"], settings.openai_base_url

    def build(key: str) -> Provider:
        return kind(api_key=key, base_url=base_url, timeout=settings.llm_timeout, files=files)

    return KeyRing.of(keys, build, count)
