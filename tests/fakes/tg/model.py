"""What the fake Telegram keeps: users, chats, the bot's messages, drafts, calls, flood buckets."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

TOKEN = "7000001:TEST-fake-telegram-token"
BOT_ID = 7000001
BOT_USERNAME = "parley_test_bot"
BOT_USER = {
    "id": BOT_ID,
    "is_bot": True,
    "first_name": "Parley",
    "username": BOT_USERNAME,
    "can_join_groups": True,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
}


@dataclass(frozen=True)
class TgUser:
    id: int
    first_name: str
    username: str | None = None
    is_bot: bool = False  # another bot in a group, whose messages Telegram delivers too

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "is_bot": self.is_bot, "first_name": self.first_name}
        if self.username:
            data["username"] = self.username
        return data


@dataclass
class TgChat:
    id: int
    type: str  # private, group, supergroup
    title: str = ""
    first_name: str = ""
    is_forum: bool = False
    topics: dict[int, str] = field(default_factory=dict)

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "type": self.type}
        if self.type == "private":
            data["first_name"] = self.first_name
        else:
            data["title"] = self.title
        if self.is_forum:
            data["is_forum"] = True
        return data


@dataclass(frozen=True)
class Upload:
    """A file the bot sent: as a `photo` or a `document`, its name, bytes and stated type."""

    kind: str
    name: str
    data: bytes = field(repr=False)
    content_type: str


@dataclass
class BotMessage:
    """A message the bot posted, as people see it now."""

    message_id: int
    chat_id: int
    text: str
    entities: list[dict[str, Any]]
    reply_markup: dict[str, Any] | None = None
    thread_id: int | None = None
    reply_to: int | None = None
    edits: int = 0
    history: list[str] = field(default_factory=list)
    deleted: bool = False
    upload: Upload | None = None  # a photo, document or voice note; `text` is its caption
    ephemeral_id: int | None = None  # an ephemeral message's id (its message_id is 0)
    receiver: int | None = None  # the one member who sees an ephemeral message


@dataclass(frozen=True)
class Draft:
    chat_id: int
    draft_id: int
    text: str
    entities: list[dict[str, Any]]
    can_stop: bool
    thread_id: int | None
    at: float


@dataclass(frozen=True)
class Reaction:
    """A setMessageReaction: the bot's reaction to a message, `emoji` empty when removed."""

    chat_id: int
    message_id: int
    emoji: tuple[str, ...]
    at: float


@dataclass(frozen=True)
class Call:
    method: str
    params: dict[str, Any]
    ok: bool
    error: str | None
    at: float


@dataclass(frozen=True)
class FloodLimits:
    """Token buckets like Telegram's: per chat, per group (per minute), per bot, for drafts."""

    chat_rate: float = 1.0
    chat_burst: float = 3.0
    group_per_minute: float = 20.0
    group_burst: float = 5.0
    bot_rate: float = 30.0
    draft_rate: float = 5.0
    draft_burst: float = 10.0


@dataclass
class Bucket:
    rate: float
    burst: float
    tokens: float = -1.0
    stamp: float = field(default_factory=time.monotonic)

    def take(self) -> float:
        """0 if a token was taken, else seconds until one is there."""
        now = time.monotonic()
        if self.tokens < 0:
            self.tokens = self.burst
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate

    def refund(self) -> None:
        self.tokens = min(self.burst, self.tokens + 1)


class ApiError(Exception):
    """An answer with ok=false, as the Bot API sends it."""

    def __init__(self, code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.retry_after = retry_after

    def wire(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "ok": False,
            "error_code": self.code,
            "description": self.description,
        }
        if self.retry_after is not None:
            data["parameters"] = {"retry_after": self.retry_after}
        return data


def bad(description: str) -> ApiError:
    return ApiError(400, f"Bad Request: {description}")
