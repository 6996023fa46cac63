"""What a provider's stream is normalised into, whatever API it came from."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from bot.vocabulary.messages import Thought
from bot.vocabulary.usage import Usage


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """Part of the model's thinking, as it streams (to show it, never sent back)."""

    text: str


@dataclass(frozen=True)
class ThoughtDone:
    """A whole thinking block with its signature, to keep with the answer and send back."""

    block: Thought


@dataclass(frozen=True)
class ToolCall:
    """A complete tool call: emitted only once its arguments have fully arrived."""

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str = ""
    error: str | None = None

    @classmethod
    def from_json(cls, call_id: str, name: str, raw: str) -> ToolCall:
        """Parse streamed argument JSON; a bad payload is kept and flagged, never raised."""
        if not raw.strip():
            return cls(call_id, name, {}, raw)
        try:
            arguments = json.loads(raw)
        except json.JSONDecodeError as exc:
            return cls(call_id, name, {}, raw, f"arguments are not valid JSON: {exc.msg}")
        if not isinstance(arguments, dict):
            return cls(call_id, name, {}, raw, "arguments must be a JSON object")
        return cls(call_id, name, arguments, raw)


@dataclass(frozen=True)
class Finished:
    """The end of one model call; `reason` is normalised to end_turn, tool_use or max_tokens."""

    reason: str


@dataclass(frozen=True)
class Retrying:
    attempt: int
    delay: float
    error: str


@dataclass(frozen=True)
class Reset:
    """Forget everything this model call streamed so far: a retry starts it again."""


ProviderEvent = (
    TextDelta | ThinkingDelta | ThoughtDone | ToolCall | Usage | Finished | Retrying | Reset
)
