"""The conversation as Parley stores it: provider-neutral messages made of content blocks.

The shape follows the Anthropic Messages API (text, tool_use, tool_result, image, document and
thinking blocks) because it is the richer of the two; the OpenAI provider translates it on the
way out.
Everything here is a pydantic model so a session's context can be persisted as JSON and
loaded by any worker.
"""

from __future__ import annotations

import operator
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, Field

from bot.vocabulary.files import FileRef, SentFile
from bot.vocabulary.usage import Usage

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
    """A call's result; `files` are those it sent the person (`FileSent`), with their
    captions, for the record and a conversation's history, never for the model, which reads
    about them in `content`."""

    type: Literal["tool_result"] = "tool_result"
    tool_use_id: str
    content: str
    is_error: bool = False
    # left out of the JSON when empty: a result without files is stored as it always was
    files: list[SentFile] = Field(default_factory=list, exclude_if=lambda files: not files)


class ImageBlock(BaseModel):
    """An image the person sent, by reference: each provider reads its bytes from the file
    store when it encodes the message (once per message, see `PerMessage`)."""

    type: Literal["image"] = "image"
    file: FileRef


class DocumentBlock(BaseModel):
    """A document the person sent (a PDF, a text file), by reference, like `ImageBlock`."""

    type: Literal["document"] = "document"
    file: FileRef


class ThinkingBlock(BaseModel):
    """What the model thought before it answered (extended thinking), with the signature its
    API made of it: the API checks the signature when the block is sent back, as it must be
    within a turn of tool calls, so both are kept exactly as they came."""

    type: Literal["thinking"] = "thinking"
    thinking: str
    signature: str = ""


class RedactedThinkingBlock(BaseModel):
    """Thinking the API returned encrypted (flagged by its safety systems): shown to nobody,
    sent back as it came."""

    type: Literal["redacted_thinking"] = "redacted_thinking"
    data: str


Block = Annotated[
    TextBlock
    | ToolUseBlock
    | ToolResultBlock
    | ImageBlock
    | DocumentBlock
    | ThinkingBlock
    | RedactedThinkingBlock,
    Field(discriminator="type"),
]
Attached = ImageBlock | DocumentBlock
Thought = ThinkingBlock | RedactedThinkingBlock
T = TypeVar("T")


class Message(BaseModel):
    """One message; `summary` marks the stand-in for turns that compaction folded away.

    `id` stays with the message wherever the state goes, so recording it twice (a turn
    resumed after a crash) writes one row; `usage` is that of the model call that wrote it.
    `voice` is an answer's voice note (`bot.session.voice`), never the model's to read: kept
    with the message so the file goes when the message goes.
    """

    role: Literal["user", "assistant"]
    content: list[Block]
    summary: bool = False
    id: str = Field(default_factory=new_id)
    at: float = Field(default_factory=time.time)
    usage: Usage | None = None
    model: str | None = None  # the model that wrote it (an assistant message)
    voice: FileRef | None = Field(default=None, exclude_if=lambda voice: voice is None)

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
    def attached(self) -> list[Attached]:
        """The files the person sent with the message: images and documents."""
        return [block for block in self.content if isinstance(block, ImageBlock | DocumentBlock)]

    @property
    def stored_files(self) -> list[str]:
        """The hashes of every file the store keeps for the message: those the person sent
        with it, those a tool sent them, whose results it carries, and its voice note."""
        refs = [block.file for block in self.attached]
        refs += [ref for result in self.tool_results for ref in result.files]
        refs += [self.voice] if self.voice is not None else []
        return list(dict.fromkeys(sha for ref in refs for sha in ref.stored))

    @property
    def starts_turn(self) -> bool:
        """A user message that carries no tool results opens a turn; compaction cuts only here."""
        return self.role == "user" and not self.tool_results


class PerMessage(Generic[T]):
    """A value made from each message of a context (its encoding for a model's API, its size
    for the budget), kept from one call to the next.

    Every model call of a conversation needs them for every message; kept, a call makes them
    only for the messages it adds. The messages a context shares with the previous call are
    found by identity, at C speed. A message is changed in place only while it is the last of
    its context (a user message taking the next blocks, a failed turn taken out), so of the
    messages shared only the last one is looked at more closely: its blocks, by identity,
    since a block is replaced, never changed in place."""

    def __init__(self, make: Callable[[Message], T]) -> None:
        self.make = make
        self._messages: list[Message] = []
        self._blocks: list[tuple[Block, ...]] = []
        self._values: list[T] = []

    def values(self, messages: Sequence[Message]) -> list[T]:
        """The value of each of `messages`, in order."""
        keep = self._kept(messages)
        fresh = messages[keep:]
        del self._messages[keep:], self._blocks[keep:], self._values[keep:]
        self._messages.extend(fresh)
        self._blocks.extend(tuple(m.content) for m in fresh)
        self._values.extend(self.make(m) for m in fresh)
        return self._values

    def fresh(self, messages: Sequence[Message]) -> Sequence[Message]:
        """The messages `values` would make a value for: those it does not keep."""
        return messages[self._kept(messages) :]

    def _kept(self, messages: Sequence[Message]) -> int:
        """How many of `messages`, from the first, have their values kept."""
        limit = min(len(messages), len(self._messages))
        same = list(map(operator.is_, messages[:limit], self._messages[:limit]))
        keep = same.index(False) if False in same else limit
        if keep and not _same(self._blocks[keep - 1], messages[keep - 1].content):
            keep -= 1
        return keep


def _same(blocks: tuple[Block, ...], now: Sequence[Block]) -> bool:
    return len(blocks) == len(now) and all(map(operator.is_, blocks, now))
