"""A session's agent state: everything needed to continue it in another process.

It is saved after every step of a turn, so a turn interrupted anywhere can be picked up from
the last step by whoever loads it next; a save writes what changed (`bot.session.states`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

from bot.vocabulary.envelope import Sender
from bot.vocabulary.events import PlanStep
from bot.vocabulary.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    PerMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.runs import RunRecord
from bot.vocabulary.trace import Trace
from bot.vocabulary.usage import Usage


class ContextMark(BaseModel):
    """Where a turn's content begins: the message its first user content went into, and how
    many blocks that message had before (a message merged into a trailing one)."""

    message: str
    blocks: int


class TurnProgress(BaseModel):
    """The turn in flight: its iteration count, repeat tracking and read-only tool cache.

    `person` and `chat_kind` are whom the turn is for and where, as its message said: a
    decision on its tool calls, or a worker continuing it after a crash, goes on as that
    person in that chat (their role, memories and preferences), whoever pressed the button
    (an admin deciding for a guest does not make the rest of the guest's turn an admin's).
    `config` is how the turn was asked to run, which its later runs keep; `plan*` where a
    `plan_execute` turn stands (`bot.agent.plan`); `validations` how often its answer was
    checked against its output schema."""

    envelope_ids: list[str] = Field(default_factory=list)
    person: Sender | None = None
    chat_kind: str | None = None
    iteration: int = 0
    usage: Usage = Field(default_factory=Usage)
    repeat_signature: str | None = None
    repeat_count: int = 0
    cache: dict[str, str] = Field(default_factory=dict)
    started: list[str] = Field(default_factory=list)
    config: RunConfig | None = None
    plan: list[PlanStep] | None = None
    plan_phase: Literal["planning", "executing", "revising", "answering"] | None = None
    plan_revision: int = 0
    validations: int = 0
    trace: Trace | None = None  # the run's trace so far, for a worker that resumes it
    start: ContextMark | None = None
    files_sent: int = 0  # files the turn's tools sent the person (`bot.agent.attachments`)
    helpers: list[str] = Field(default_factory=list)  # its `delegate` calls let through, by id
    out_bytes: int = 0  # bytes of them its programs left in the sandbox's ./out/, as read


class PendingConfirmation(BaseModel):
    """A batch of tool calls of which some wait for a person's decision."""

    calls: list[ToolUseBlock]
    results: dict[str, ToolResultBlock] = Field(default_factory=dict)
    waiting: list[str] = Field(default_factory=list)
    confirmation_id: str | None = None
    asked_at: float | None = None  # when the person was asked (None in states saved before)


@dataclass
class WrittenContext:
    """The context as it is stored, as far as this process knows: the messages it last
    wrote or read, each with its JSON and that JSON's size in bytes; the first `cold` of
    them are in SQL under `epoch`, the rest in Redis (`bot.session.states`)."""

    messages: list[Message]
    encoded: list[str]
    sizes: list[int]
    cold: int = 0
    epoch: str = ""


class SessionState(BaseModel):
    """`finished` names the envelopes of the last run that ended, so a worker that finds
    them still queued (its predecessor died between the last save and the commit) commits
    them instead of answering again. `recorded` is the id of the last message written to
    SQL; the next record starts there. `unrecorded` holds the runs whose rows the database
    did not take yet (it was away); the next record writes them first. `unanswered` says the
    context ends in a message a passing failure of the model's API left without its answer
    (`bot.agent.failed_turn`). `blind` names the models that refused the context's images
    (without vision): they are sent a sentence for each from then on."""

    messages: list[Message] = Field(default_factory=list)
    turn: TurnProgress | None = None
    pending: PendingConfirmation | None = None
    memory: list[str] = Field(default_factory=list)  # the memories the prompt carries
    memory_version: str | None = None  # of the memories they were chosen from
    finished: list[str] = Field(default_factory=list)
    recorded: str | None = None
    unrecorded: list[RunRecord] = Field(default_factory=list)
    unanswered: bool = False
    blind: list[str] = Field(default_factory=list)  # models that refused its images
    _written: WrittenContext | None = PrivateAttr(default=None)  # see `bot.session.states`
    _per_message: dict[str, PerMessage[Any]] = PrivateAttr(default_factory=dict)

    @property
    def per_message(self) -> dict[str, PerMessage[Any]]:
        """What is kept of the context's messages from one model call to the next: their
        encodings for the API, their sizes for the budget (`bot.vocabulary.messages.PerMessage`)."""
        return self._per_message

    __hash__ = None  # type: ignore[assignment]  # mutable: unhashable, as pydantic makes it

    def __eq__(self, other: object) -> bool:
        """Equal fields: what this process keeps beside them (what Redis holds, what was
        derived from the messages) is no part of the state."""
        if not isinstance(other, SessionState):
            return NotImplemented
        return self.__dict__ == other.__dict__

    def unanswered_tool_uses(self) -> list[ToolUseBlock]:
        """Tool calls of the last assistant message that have no result yet (an interruption)."""
        if self.pending is not None or not self.messages:
            return []
        last = self.messages[-1]
        return last.tool_uses if last.role == "assistant" else []

    def close_unanswered(self, note: str) -> None:
        """Give every unanswered tool call a result, so the context stays valid for the API."""
        calls = self.unanswered_tool_uses()
        if calls:
            self.add_user(
                *(ToolResultBlock(tool_use_id=c.id, content=note, is_error=True) for c in calls)
            )

    def add_user(self, *blocks: TextBlock | ToolResultBlock | ImageBlock | DocumentBlock) -> None:
        """Append user content, merging into a trailing user message so roles alternate."""
        if self.messages and self.messages[-1].role == "user" and not self.messages[-1].summary:
            self.messages[-1].content.extend(blocks)
        else:
            self.messages.append(Message(role="user", content=list(blocks)))
