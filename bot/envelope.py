"""An incoming message as it travels through Redis, whatever platform it came from."""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, Field

MAX_TEXT = 32_000


class Sender(BaseModel):
    """Who sent it: a platform-prefixed id (`tg:123`, `slack:U1`, `http:token`)."""

    id: str
    name: str = ""
    is_admin: bool = False


class Envelope(BaseModel):
    """One platform update, ready for a worker.

    `id` comes from the platform (Telegram update_id, Slack event_id, an HTTP request id) so a
    delivery repeated by the platform is recognised and dropped. `reply_to` is opaque to the
    core: the adapter that made the envelope reads it back when it answers. A `command`
    (`text` = "new") changes the session itself, in order with its messages; a `decision`
    with `remember` also allows the approved tools for the rest of the session.
    """

    id: str = Field(min_length=1, max_length=200)
    session: str = Field(min_length=1, max_length=300)
    kind: Literal["message", "decision", "command"] = "message"
    text: str = Field(default="", max_length=MAX_TEXT)
    sender: Sender
    platform: str = "http"
    chat_kind: str = "private"
    reply_to: dict[str, Any] = Field(default_factory=dict)
    confirmation_id: str | None = None
    approve: bool | None = None
    remember: bool = False
    received_at: float = Field(default_factory=time.time)

    @property
    def is_plain(self) -> bool:
        """A text message that may be merged with the ones right after it."""
        return self.kind == "message"
