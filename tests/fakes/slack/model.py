"""What the fake Slack keeps: the workspace's people and places, messages, calls, deliveries."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

BOT_TOKEN = "xoxb-parley-test"
APP_TOKEN = "xapp-parley-test"
SIGNING_SECRET = "parley-signing-secret"
VERIFICATION_TOKEN = "fake-verification-token"
TEAM_ID = "T0PARLEY"
TEAM_DOMAIN = "parley-test"
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
APP_ID = "A0PARLEY"
MENTION = f"<@{BOT_USER_ID}>"

# Slack's documented limits (characters)
TEXT_LIMIT = 40_000
MARKDOWN_LIMIT = 12_000

Streaming = Literal["none", "streaming", "stopped", "expired"]


@dataclass(frozen=True)
class SlackUser:
    id: str
    name: str


@dataclass(frozen=True)
class SlackChannel:
    id: str
    name: str
    is_im: bool = False
    user: SlackUser | None = None  # the person on the other side of a DM

    @property
    def channel_type(self) -> str:
        return "im" if self.is_im else "channel"


@dataclass
class Posted:
    """A message as people see it now; the fake changes it in place on update and delete."""

    ts: str
    channel: str
    user: str | None
    bot_id: str | None
    thread_ts: str | None
    text: str = ""
    markdown_text: str | None = None
    blocks: list[dict[str, Any]] | None = None
    streaming: Streaming = "none"
    deleted: bool = False
    streamed: str = ""  # the markdown a stream has shown so far
    subtype: str | None = None  # "assistant_app_thread" for an assistant thread's hidden root
    ephemeral_to: str | None = None  # the only user who sees it (a slash command's answer)
    files: list[dict[str, Any]] | None = None  # file objects a person shared with it
    edits: int = 0
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # a stream's, by id
    task_history: list[dict[str, Any]] = field(default_factory=list)  # every update, in order
    touched: float = field(default_factory=time.monotonic, repr=False, compare=False)

    @property
    def shown(self) -> str:
        """What a person sees: markdown_text, else the streamed markdown, else text."""
        if self.markdown_text is not None:
            return self.markdown_text
        if self.streamed:
            return self.streamed
        return self.text

    def update_tasks(self, updates: list[dict[str, Any]]) -> None:
        for update in updates:
            self.tasks[update["id"]] = {**self.tasks.get(update["id"], {}), **update}
            self.task_history.append(update)

    @property
    def is_bot(self) -> bool:
        return self.bot_id == BOT_ID

    def wire(self) -> dict[str, Any]:
        """The message as the Web API and interactivity payloads show it."""
        data: dict[str, Any] = {"type": "message", "ts": self.ts, "text": self.shown}
        if self.user is not None:
            data["user"] = self.user
        if self.bot_id is not None:
            data["bot_id"] = self.bot_id
            data["app_id"] = APP_ID
        data["team"] = TEAM_ID
        if self.thread_ts is not None:
            data["thread_ts"] = self.thread_ts
        if self.blocks is not None:
            data["blocks"] = self.blocks
        if self.subtype is not None:
            data["subtype"] = self.subtype
        return data


@dataclass(frozen=True)
class Call:
    method: str
    params: dict[str, Any]
    at: float  # time.monotonic()
    status: int
    error: str | None


@dataclass(frozen=True)
class Delivery:
    """One attempt to hand an event or interaction to the app (HTTP POST or socket envelope).

    `status` is the HTTP status (200 for an acked envelope); 0 means no answer in time or a
    connection error. Over Socket Mode `headers` holds the envelope_id and retry_reason."""

    body: dict[str, Any]
    headers: dict[str, str]
    status: int
    elapsed: float
    retry_num: int
    answer: str = ""


class ApiError(Exception):
    """An answer with ok=false (and its HTTP status and headers), as the Web API sends it."""

    def __init__(
        self,
        error: str,
        *,
        status: int = 200,
        retry_after: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(error)
        self.error = error
        self.status = status
        self.retry_after = retry_after
        self.extra = extra or {}

    def wire(self) -> dict[str, Any]:
        return {"ok": False, "error": self.error, **self.extra}

    def headers(self) -> dict[str, str]:
        if self.retry_after is None:
            return {}
        return {"Retry-After": str(self.retry_after)}


class TsClock:
    """Message timestamps like Slack's: wall-clock seconds with microseconds, strictly rising."""

    def __init__(self) -> None:
        self._last = 0

    def next(self) -> str:
        self._last = max(int(time.time() * 1_000_000), self._last + 100)
        seconds, micros = divmod(self._last, 1_000_000)
        return f"{seconds}.{micros:06d}"
