"""Where a Slack conversation lives: the workspace, the channel, and the thread in it.

Each thread is a session: a mention at the top of a channel starts one (the reply goes into
the thread under it), and later replies in that thread continue it. A direct message outside
threads is one session per person; a thread in a DM (the assistant pane opens one per
conversation) is a session of its own. Every `slack:` name Parley gives something of Slack's
is made (and read back) here, and only here: a person (`slack:{user}`), a chat (the channel or
DM, `slack:{team}:{channel}`, its threads' sessions under it), a message's envelope, the
bot's account in a workspace (`slack:{team}`), whose pairing codes are counted together.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from bot.config.settings import Settings
from bot.vocabulary.envelope import Sender

PLATFORM = "slack"


class Place(BaseModel):
    """Kept in an envelope's `reply_to`, so the worker knows where to answer."""

    team: str
    channel: str
    thread_ts: str | None = None  # the thread the reply goes into; None: the DM itself
    user: str = ""  # the person answered: streams in channels are addressed to them
    is_im: bool = False

    @property
    def session(self) -> str:
        base = chat_key(self.team, self.channel)
        return f"{base}:{self.thread_ts}" if self.thread_ts else base

    def envelope_id(self, ts: str) -> str:
        """The envelope id of the message `ts` here: Slack's retries, and the `message` and
        `app_mention` events it sends for one mention, are one envelope."""
        return f"{chat_key(self.team, self.channel)}:{ts}"

    @property
    def kind(self) -> str:
        """What the tools are told about the chat: private, or a thread in a channel."""
        return "private" if self.is_im else "thread"

    @classmethod
    def from_reply_to(cls, reply_to: dict[str, Any]) -> Place:
        return cls.model_validate(reply_to)


def place_of(event: dict[str, Any], team: str) -> Place:
    """Where to answer `event` (a message or an app mention): in its thread, a new thread under
    it in channels, or the DM itself for a DM outside threads."""
    is_im = event.get("channel_type") == "im"
    thread = event.get("thread_ts")
    if thread is None and not is_im:
        thread = event.get("ts")
    return Place(
        team=team,
        channel=str(event["channel"]),
        thread_ts=thread,
        user=str(event.get("user", "")),
        is_im=is_im,
    )


def person(user_id: str) -> str:
    """A Slack user as the gate, the limits and the record know them."""
    return f"{PLATFORM}:{user_id}"


def user_of(person_id: str) -> str | None:
    """The Slack user id in a person's id, None for another platform's person."""
    prefix = f"{PLATFORM}:"
    return person_id.removeprefix(prefix) if person_id.startswith(prefix) else None


def chat_key(team: str, channel: str) -> str:
    """The chat's key: the channel or DM, whose threads' sessions start with it;
    `bot.vocabulary.chats.chat_of` of any of them."""
    return f"{PLATFORM}:{team}:{channel}"


def sender_of(user_id: str, name: str, settings: Settings) -> Sender:
    who = person(user_id)
    return Sender(id=who, name=name or who, is_admin=settings.is_admin(who))


def account(team: str) -> str:
    """The bot's account in a workspace, as pairing counts the codes waiting on it."""
    return f"{PLATFORM}:{team}"


def in_dm(command: dict[str, Any]) -> bool:
    """Whether a slash command was typed in a DM, where PARLEY_DM_POLICY decides who may."""
    return str(command.get("channel_id", "")).startswith("D")
