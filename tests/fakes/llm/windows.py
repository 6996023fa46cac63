"""Context windows, enforced as the APIs do: a request whose prompt and `max_tokens` together
pass its model's window is refused (400) before anything is generated.

Tokens are counted as the fake counts them for its usage (a quarter of each part's canonical
JSON, `cache.tokens`), so what a test reads in `usage.input_tokens` is what was held against
the window. A window is given per model name prefix (`FakeLLM(context_windows=...)`); a model that
matches none has no limit here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tests.fakes.llm.cache import anthropic_blocks, tokens


@dataclass(frozen=True)
class TooLong:
    """Why a request was refused, in the API's own words and error code."""

    message: str
    code: str | None = None


def prompt_tokens(api: Literal["anthropic", "openai"], body: dict[str, Any]) -> int:
    """The prompt's tokens: its tools, system prompt and messages."""
    if api == "anthropic":
        return sum(tokens(block) for block, _ in anthropic_blocks(body))
    parts: list[Any] = [{"tools": body.get("tools", [])}, *body.get("messages", [])]
    return sum(tokens(part) for part in parts)


def window_of(windows: Mapping[str, int], model: str) -> int | None:
    """The window of `model`: the longest prefix given that it starts with."""
    found = [prefix for prefix in windows if model.startswith(prefix)]
    return windows[max(found, key=len)] if found else None


def too_long(
    api: Literal["anthropic", "openai"], body: dict[str, Any], windows: Mapping[str, int]
) -> TooLong | None:
    """The refusal of a request that does not fit its model's window, or None."""
    window = window_of(windows, str(body.get("model", "")))
    if window is None:
        return None
    prompt = prompt_tokens(api, body)
    answer = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
    if prompt + answer <= window:
        return None
    if api == "openai":
        return TooLong(
            f"This model's maximum context length is {window} tokens. However, you requested "
            f"{prompt + answer} tokens ({prompt} in the messages, {answer} in the completion). "
            "Please reduce the length of the messages or completion.",
            "context_length_exceeded",
        )
    if prompt > window:
        return TooLong(f"prompt is too long: {prompt} tokens > {window} maximum")
    return TooLong(
        f"input length and `max_tokens` exceed context limit: {prompt} + {answer} > {window}, "
        "decrease input length or `max_tokens` and try again"
    )
