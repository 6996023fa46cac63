"""An incoming message as it travels through Redis, whatever platform it came from."""

from __future__ import annotations

import itertools
import re
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bot.vocabulary.files import FileRef
from bot.vocabulary.run_config import RunConfig

MAX_TEXT = 32_000
MAX_ATTACHMENTS = 10  # a Telegram album's most; each platform's own cap is a setting
# The sender id that marked an expiry before envelopes had the kind `expiry`.
OLD_EXPIRY_SENDER = "parley:timeout"
_TASK_RUN = re.compile(r"task:([0-9]{1,19}):-?[0-9]{1,20}")


class Sender(BaseModel):
    """A person talking to Parley: who sent an envelope, and the user a tool call is for
    (`ToolContext.user`). `id` is platform-prefixed: `tg:123`, `slack:U1`, `http:token`."""

    model_config = ConfigDict(frozen=True)

    id: str
    name: str = ""
    is_admin: bool = False
    # Let in as a user by an admin's approval of their pairing code (`bot.people.pairing`),
    # stamped where the message came in, as `is_admin` is.
    paired: bool = False


MAX_INITIAL = 100  # messages of a transcript a run starts from


class Said(BaseModel):
    """A message of the transcript an API run starts from (`initial_messages`): who said it,
    and its text."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=MAX_TEXT)


def transcript_problem(said: list[Said]) -> str | None:
    """What is wrong with a transcript a run starts from, or None: it begins with the
    person, takes turns, and ends with an answer, since the run's task comes next."""
    roles = [message.role for message in said]
    if not roles:
        return None
    if roles[0] != "user" or roles[-1] != "assistant":
        return "a transcript begins with a user message and ends with an assistant one"
    if any(first == second for first, second in itertools.pairwise(roles)):
        return "a transcript's messages take turns: user, assistant, user, …"
    return None


class Envelope(BaseModel):
    """One platform update, ready for a worker.

    `id` comes from the platform (Telegram update_id, Slack event_id, an HTTP request id) so a
    delivery repeated by the platform is recognised and dropped. `reply_to` is opaque to the
    core: the adapter that made the envelope reads it back when it answers. A `command`
    (`text` = "new", "compact") changes the session itself, in order with its messages; a
    `decision` with `remember` also allows the approved tools for the rest of the session. An
    `expiry` is the decision nobody made in time: the calls that waited do not run, and the
    model is told no decision was made (a question: that it had no answer). A `scheduled`
    envelope is a run of a scheduled task, sent by the scheduler in the name of the person who
    made the task; it is a turn of its own, never merged with messages. A message with a
    `run` config (an API run, a task's schema) is a turn of its own too. A message's
    `attachments` are the files sent with its text, already in the file store; `heard` is
    what was said in its voice notes, as transcribed, for the reply to show (`text` holds
    it too, marked, as the model reads it). `context` is what the platform says about where
    the person is as they write (Slack: the channel they are looking at beside an assistant
    thread); it is not theirs to vouch for, so the model reads it marked as untrusted data.
    A helper's envelope names the run whose `delegate` call started it (`parent_run`), so its
    exported spans nest under that call (`bot.telemetry.spans`). A replay (`replay_of`, an
    evaluation's, `bot.lab`) runs a recorded run's message again with its `run` config, the
    conversation before it as it was, and none of its side effects repeated; its prompt names
    the platform the recorded run was on (`seen_on`), not the lab's. An API run's
    `initial` transcript is the conversation its new session starts with. A `quiet`
    scheduled run (a check-in) is shown only once it ended, and not at all when its answer
    says there is nothing to report (`bot.session.quiet`).
    """

    id: str = Field(min_length=1, max_length=200)
    session: str = Field(min_length=1, max_length=300)
    kind: Literal["message", "decision", "expiry", "command", "scheduled"] = "message"
    text: str = Field(default="", max_length=MAX_TEXT)
    attachments: list[FileRef] = Field(default_factory=list, max_length=MAX_ATTACHMENTS)
    heard: str = Field(default="", max_length=MAX_TEXT)
    context: str = Field(default="", max_length=2_000)
    sender: Sender
    platform: str = "http"
    chat_kind: str = "private"
    reply_to: dict[str, Any] = Field(default_factory=dict)
    confirmation_id: str | None = None
    approve: bool | None = None
    remember: bool = False
    run: RunConfig | None = None
    parent_run: str | None = Field(default=None, max_length=64)  # a helper's: see below
    replay_of: str | None = Field(default=None, pattern=r"^[0-9a-f]{32}$")  # see below
    seen_on: str = Field(default="", max_length=32)  # a replay's: its recorded run's platform
    initial: list[Said] = Field(default_factory=list, max_length=MAX_INITIAL)  # see below
    quiet: bool = False  # a scheduled run of a check-in: see below
    received_at: float = Field(default_factory=time.time)

    @model_validator(mode="before")
    @classmethod
    def _old_expiry(cls, data: Any) -> Any:
        """An expiry queued by an older worker is a decision from the sender `parley:timeout`;
        it may still wait in a Redis inbox when a worker is upgraded, and stays an expiry."""
        sender = data.get("sender") if isinstance(data, dict) else None
        if isinstance(sender, dict) and sender.get("id") == OLD_EXPIRY_SENDER:
            return {**data, "kind": "expiry"}
        return data

    @property
    def is_decision(self) -> bool:
        """A decision on waiting tool calls (or an answer to a question): a person's, or the
        expiry's (none was made)."""
        return self.kind in ("decision", "expiry")

    @property
    def is_plain(self) -> bool:
        """A text message that may be merged with the ones right after it."""
        return self.kind == "message" and self.run is None


# Envelope ids that are not the platform's own. Each is the mailbox's dedup key, so it must
# be the same wherever the envelope is made: a press delivered twice, an expiry fired by two
# workers, or a task's run fired twice during a scheduler's takeover, is one envelope.


def decision_id(confirmation_id: str) -> str:
    """The id of a person's decision on a confirmation."""
    return f"decision:{confirmation_id}"


def expiry_id(confirmation_id: str) -> str:
    """The id of a confirmation's expiry."""
    return f"expire:{confirmation_id}"


def task_run_id(task_id: int, due: float) -> str:
    """The id of a task's run due at the Unix time `due`."""
    return f"task:{task_id}:{due:.0f}"


def task_of_run(envelope_id: str) -> int | None:
    """The task whose run `envelope_id` (`task_run_id`) is, or None if it is none's."""
    match = _TASK_RUN.fullmatch(envelope_id)
    return int(match[1]) if match else None
