"""The provider contract: one streaming call, normalised events out, `ProviderError` on failure."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from bot.llm.events import ProviderEvent
from bot.vocabulary.messages import Message, PerMessage
from bot.vocabulary.run_config import Effort


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told about a tool: its name, purpose and JSON schema."""

    name: str
    description: str
    input_schema: dict[str, Any]

    @cached_property
    def encoded_size(self) -> int:
        """Characters of its JSON, for a request's estimate: measured once, as a tool's
        spec does not change, and every model call of every turn offers it."""
        spec = {"name": self.name, "description": self.description}
        return len(json.dumps(spec | {"input_schema": self.input_schema}))


@dataclass(frozen=True)
class SystemPart:
    """A piece of the system prompt; `stable` parts form a cacheable prefix."""

    text: str
    stable: bool = True


@dataclass(frozen=True)
class ModelRequest:
    """`per_message`: what a provider keeps of the conversation's messages from one call to
    the next (their encodings, by provider); the loop passes the session's, so a call
    encodes only the messages it adds."""

    model: str
    system: list[SystemPart]
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int = 4096
    temperature: float | None = None  # None: the provider's default
    top_p: float | None = None
    reasoning: Effort | None = None  # None: the model answers without thinking first
    show_thinking: bool = True  # whether its thinking is shown, or only kept to send back
    images: bool = True  # False: a sentence stands for each image (a model without vision)
    per_message: dict[str, PerMessage[Any]] = field(default_factory=dict)


class Provider(Protocol):
    """A model API. `stream` yields TextDelta, ThinkingDelta, ThoughtDone, ToolCall, Usage
    and finally Finished. Usage may come more than once, each time the call's whole usage so
    far (the latest counts): as soon as the API says it, so a call cut off still has one.

    Providers never retry: `bot.llm.retry` does, so every attempt is visible to the loop.
    """

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]: ...

    async def aclose(self) -> None: ...
