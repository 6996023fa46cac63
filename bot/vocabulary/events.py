"""What the agent loop tells the outside world while a turn runs.

Events are pydantic models with a `type` tag so they can cross process boundaries as JSON
(worker → Redis → an HTTP stream) and be read back on the other side.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from bot.vocabulary.files import FileRef
from bot.vocabulary.questions import Question
from bot.vocabulary.ran_with import RanWith
from bot.vocabulary.usage import Usage


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


class Trigger(StrEnum):
    """What started a run (`RunRecord.trigger`, kept in the run's row; the runs' list and
    the dashboard filter on it)."""

    MESSAGE = "message"  # a person's message, or several merged into one turn
    API = "api"  # an HTTP API run: a message that carries its own run config
    HELPER = "helper"  # a helper's run, started by its parent's `delegate` call
    SCHEDULED = "scheduled"  # a run of a scheduled task
    DECISION = "decision"  # an approval decided (or a question answered) by a person
    EXPIRY = "expiry"  # an approval or a question nobody answered in time
    RESUME = "resume"  # a turn a stopped worker left half done, carried on
    SKIPPED = "skipped"  # a message given up on after failing too often
    REPLAY = "replay"  # a recorded run run again by an evaluation (`bot.lab`)


class FinishReason(StrEnum):
    """Why a run ended (`Completed.finish_reason`, kept in the run's record).

    A run that ends with the model's answer carries the model's own stop reason, as the
    provider normalised it: `END_TURN`, `MAX_TOKENS`, or a reason of that provider's that is
    none of these, passed through as it is (hence `FinishReason | str` where it is read).
    """

    END_TURN = "end_turn"
    MAX_TOKENS = "max_tokens"
    AWAITING_CONFIRMATION = "awaiting_confirmation"  # tool calls wait for a person
    CANCELLED = "cancelled"  # a /stop, or the text stream was cut off
    TIMED_OUT = "timed_out"  # the turn ran past PARLEY_TURN_TIMEOUT
    MAX_ITERATIONS = "max_iterations"  # PARLEY_MAX_ITERATIONS model calls without an answer
    BUDGET_SPENT = "budget_spent"  # the run's token budget left no room for another call
    DOOM_LOOP = "doom_loop"  # the same tool call with the same arguments, again and again
    INVALID_OUTPUT = "invalid_output"  # the answer still broke its output schema after repairs
    ERROR = "error"  # the provider failed beyond its retries
    NOTHING_PENDING = "nothing_pending"  # a decision arrived with nothing waiting for one
    POISONED = "poisoned"  # the message crashed workers too often and was skipped


class StateChanged(BaseModel):
    type: Literal["state"] = "state"
    layer: Literal["turn", "call"]
    state: str


class TextDelta(BaseModel):
    type: Literal["text_delta"] = "text_delta"
    text: str


class ThinkingDelta(BaseModel):
    """Part of the model's thinking before its answer, for the surfaces that show it."""

    type: Literal["thinking_delta"] = "thinking_delta"
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


class FileSent(BaseModel):
    """A file a tool made for the person, stored by content (`file`) and to be shown where
    the conversation is: a picture or a file to download, with its `caption`. It follows
    the result of the call that made it (`call_id`). A reply said aloud is one too
    (`bot.session.voice`): Opus in Ogg, `voice_seconds` long, shown as a voice message or an
    audio player where the platform has one."""

    type: Literal["file"] = "file"
    call_id: str
    file: FileRef
    caption: str = ""
    voice_seconds: float | None = Field(default=None, exclude_if=lambda seconds: seconds is None)


class Iteration(BaseModel):
    type: Literal["iteration"] = "iteration"
    number: int
    model: str = ""  # the model asked


class ModelAnswered(BaseModel):
    """A model call ended: the model that made it (a fallback, when one did), the tokens it
    used and its stop reason (None when it was cut off or failed). The trace keeps them on
    the call's node, which is how each call's tokens reach an exported span; the session's
    player keeps it off the reply's stream (`bot.session.play`)."""

    type: Literal["answered"] = "answered"
    model: str
    usage: Usage
    finish_reason: str | None = None


class FailedOver(BaseModel):
    """A model stayed overloaded, rate limited or out of reach after its retries: the call
    is made again on the next model of PARLEY_FALLBACK_MODELS, from its start."""

    type: Literal["failover"] = "failover"
    failed: str
    model: str
    error: str


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
    """Tool calls wait for a person; the worker adds the record's id and expiry. With
    `questions`, the one call waiting is `ask_user`: the person answers rather than approves.
    With `helper`, the calls are a helper's, asked in its parent's reply while the parent's
    `delegate` call waits; `helper` is its task, as its status line shows it."""

    type: Literal["confirmation_required"] = "confirmation_required"
    calls: list[PendingCall]
    can_remember: bool = True
    confirmation_id: str | None = None
    expires_at: float | None = None
    questions: list[Question] = Field(default_factory=list)
    timeout: float | None = None  # how long it waits, when its policy rule says
    requester: str | None = None  # whom it waits for (the worker adds it)
    helper: str | None = None


class Reminded(BaseModel):
    """An approval or a question still waits, a while before it expires: its person is
    reminded (on a session's event stream; a chat gets a message that names them)."""

    type: Literal["reminder"] = "reminder"
    confirmation_id: str
    expires_at: float


class Compacted(BaseModel):
    type: Literal["compacted"] = "compacted"
    tokens_before: int
    tokens_after: int
    summarized: bool
    messages_folded: int


class Validated(BaseModel):
    """The final answer checked against the run's output schema; `errors` say where it
    does not match, `compliance` how close it came (0 to 100: `bot.vocabulary.compliance`),
    `repairing` that the model is asked to answer again, and `answer` is the start of the
    answer judged (what was repaired, when it was)."""

    type: Literal["validation"] = "validation"
    attempt: int
    valid: bool
    errors: list[str] = Field(default_factory=list)
    compliance: int | None = Field(default=None, ge=0, le=100)  # None: not scored
    repairing: bool = False
    answer: str = ""


PlanStatus = Literal["pending", "running", "done", "failed", "skipped"]


class PlanStep(BaseModel):
    id: int
    title: str
    depends_on: list[int] = Field(default_factory=list)
    status: PlanStatus = "pending"
    result: str = ""  # what the step found, in short, once it ended
    call_id: str = ""  # the `delegate` call that runs it as a helper, when one does


class PlanUpdated(BaseModel):
    """The whole plan of a `plan_execute` run, each time a step starts or ends or the plan
    is revised (`revision` counts the revisions)."""

    type: Literal["plan"] = "plan"
    steps: list[PlanStep]
    revision: int = 0


class Joined(BaseModel):
    """Messages the person sent while the turn ran, taken into it at a model boundary
    (`bot.vocabulary.steering`): the chat shows they were taken in, and the turn answers
    them with the rest."""

    type: Literal["joined"] = "joined"
    envelope_ids: list[str]
    text: str  # what they said, as the model reads it


class Completed(BaseModel):
    """Always the last event of a run, whatever ended it. `output` is the answer's JSON
    when the run had an output schema and the answer matched it."""

    type: Literal["completed"] = "completed"
    finish_reason: FinishReason | str
    iterations: int
    usage: Usage
    text: str = ""
    output: Any = None
    model: str = ""  # the model that answered last ("" if none was asked)
    config: RanWith | None = None  # what the run ran with (the record keeps it)


class Error(BaseModel):
    """`message` is what the person is told; `cause`, where there is one, the failure itself
    as the record and the trace keep it (a provider's error, say, without the advice)."""

    type: Literal["error"] = "error"
    message: str
    cause: str | None = None


AgentEvent = Annotated[
    StateChanged
    | TextDelta
    | ThinkingDelta
    | TextReset
    | ToolCallStart
    | ToolCallResult
    | FileSent
    | Iteration
    | ModelAnswered
    | FailedOver
    | Retrying
    | ConfirmationRequired
    | Reminded
    | Compacted
    | Validated
    | PlanUpdated
    | Joined
    | Completed
    | Error,
    Field(discriminator="type"),
]
