"""The conversation as Parley stores it: provider-neutral messages made of content blocks.

The shape follows the Anthropic Messages API (text, tool_use, tool_result blocks) because it is
the richer of the two; the OpenAI provider translates it on the way out. Everything here is a
pydantic model so a session's context can be persisted as JSON and loaded by any worker.
"""

from __future__ import annotations

import time
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from bot.llm.events import Usage

# What a provider sees of a message; the rest is Parley's own bookkeeping.
WIRE_FIELDS = {"role", "content"}


def new_id() -> str:
    return uuid.uuid4().hex


class TextBlock(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ToolUseBlock(BaseModel):
    """A tool call the model made; `raw_input` keeps arguments that were not valid JSON."""

    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)
    raw_input: str | None = None
    input_error: str | None = None


class ToolResultBlock(BaseModel):
    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str
    is_error: bool = False


Block = Annotated[TextBlock | ToolUseBlock | ToolResultBlock, Field(discriminator="type")]


class Message(BaseModel):
    """One message; `summary` marks the stand-in for turns that compaction folded away.

    `id` stays with the message wherever the state goes, so recording it twice (a turn
    resumed after a crash) writes one row; `usage` is that of the model call that wrote it.
    """

    role: Literal["user", "assistant"]
    content: list[Block]
    summary: bool = False
    id: str = Field(default_factory=new_id)
    at: float = Field(default_factory=time.time)
    usage: Usage | None = None

    @property
    def text(self) -> str:
        return "\n".join(block.text for block in self.content if isinstance(block, TextBlock))

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [block for block in self.content if isinstance(block, ToolUseBlock)]

    @property
    def tool_results(self) -> list[ToolResultBlock]:
        return [block for block in self.content if isinstance(block, ToolResultBlock)]

    @property
    def starts_turn(self) -> bool:
        """A user message that carries no tool results opens a turn; compaction cuts only here."""
        return self.role == "user" and not self.tool_results
