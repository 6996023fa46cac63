"""What the agent loop tells the outside world while a turn runs.

Events are pydantic models with a `type` tag so they can cross process boundaries as JSON
(worker → Redis → an HTTP stream) and be read back on the other side.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from bot.llm.events import Usage


class TurnState(StrEnum):
    """The outer loop: one user turn from its message to its final answer."""

    INIT = "init"
    PLANNING = "planning"
    EXECUTING = "executing"
    OBSERVING = "observing"
    COMPACTING = "compacting"
    AWAITING_CONFIRMATION = "awaiting_confirmation"
    COMPLETED = "completed"
    FAILED = "failed"


class CallState(StrEnum):
    """The inner loop: one model call and the tools it asked for."""

    CALLING = "calling"
    STREAMING = "streaming"
    TOOL_EXECUTING = "tool_executing"
    RETRYING = "retrying"


class StateChanged(BaseModel):
    type: Literal["state"] = "state"
    layer: Literal["turn", "call"]
    state: str


class TextDelta(BaseModel):
    type: Literal["text_delta"] = "text_delta"
    text: str


class TextReset(BaseModel):
    """Drop the text shown for the current model call: it is being produced again."""

    type: Literal["reset"] = "reset"
    reason: str


class ToolCallStart(BaseModel):
    type: Literal["tool_call_start"] = "tool_call_start"
    call_id: str
    name: str
    arguments: dict[str, Any]


class ToolCallResult(BaseModel):
    type: Literal["tool_call_result"] = "tool_call_result"
    call_id: str
    name: str
    content: str
    is_error: bool = False
    duration: float = 0.0
    cached: bool = False


class Iteration(BaseModel):
    type: Literal["iteration"] = "iteration"
    number: int


class Retrying(BaseModel):
    type: Literal["retrying"] = "retrying"
    attempt: int
    delay: float
    error: str


class PendingCall(BaseModel):
    call_id: str
    name: str
    arguments: dict[str, Any]


class ConfirmationRequired(BaseModel):
    """Tool calls wait for a person; the worker adds the record's id and expiry."""

    type: Literal["confirmation_required"] = "confirmation_required"
    calls: list[PendingCall]
    can_remember: bool = True
    confirmation_id: str | None = None
    expires_at: float | None = None


class Compacted(BaseModel):
    type: Literal["compacted"] = "compacted"
    tokens_before: int
    tokens_after: int
    summarized: bool
    messages_folded: int


class Completed(BaseModel):
    """Always the last event of a run, whatever ended it."""

    type: Literal["completed"] = "completed"
    finish_reason: str
    iterations: int
    usage: Usage
    text: str = ""


class Error(BaseModel):
    type: Literal["error"] = "error"
    message: str


AgentEvent = Annotated[
    StateChanged
    | TextDelta
    | TextReset
    | ToolCallStart
    | ToolCallResult
    | Iteration
    | Retrying
    | ConfirmationRequired
    | Compacted
    | Completed
    | Error,
    Field(discriminator="type"),
]
