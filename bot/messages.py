"""The conversation as Parley stores it: provider-neutral messages made of content blocks.

The shape follows the Anthropic Messages API (text, tool_use, tool_result blocks) because it is
the richer of the two; the OpenAI provider translates it on the way out. Everything here is a
pydantic model so a session's context can be persisted as JSON and loaded by any worker.
"""

from __future__ import annotations

import operator
import time
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, Field, PrivateAttr

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
T = TypeVar("T")


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
    _derived: dict[str, tuple[tuple[Any, ...], Any]] = PrivateAttr(default_factory=dict)

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable, as pydantic makes it

    def __eq__(self, other: object) -> bool:
        """Equal fields: what `derived` keeps is no part of the message."""
        if not isinstance(other, Message):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def derived(self, name: str, make: Callable[[Message], T]) -> T:
        """`make(self)`, made again only when the blocks changed since it was last made.

        What is sent of a message (its encoding for a model's API, its size for the budget) is
        asked for at every model call of a conversation, for every message; kept here, a call
        encodes only what is new. A block is replaced, never changed in place, so comparing
        the blocks by identity is enough."""
        blocks = tuple(self.content)
        kept = self._derived.get(name)
        if kept is not None:
            before, value = kept
            if len(before) == len(blocks) and all(map(operator.is_, before, blocks)):
                return value  # type: ignore[no-any-return]
        made = make(self)
        self._derived[name] = (blocks, made)
        return made

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
