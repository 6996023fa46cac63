"""Where a Telegram conversation lives: the chat, and the forum topic inside it.

A private chat is one session, a group is one session, and every topic is a session of its
own: a forum's, or a private chat's once the bot has topics enabled there (Bot API 9.3, when
getMe says `has_topics_enabled`; its messages then carry `message_thread_id` and
`is_topic_message` as a forum's do, and every answer goes back to the topic with the same
`message_thread_id`). So the place is also what the session key is made of. Every `tg:` name Parley
gives something of Telegram's is made here, and only here: a person (`tg:{user}`), a chat
(`tg:{chat}`, its topics' sessions under it), an update's envelope (`tg:{update}`), the
bot's own account (`tg:bot{id}`), whose pairing codes are counted together.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

PLATFORM = "telegram"


class Place(BaseModel):
    """Kept in an envelope's `reply_to`, so the worker knows where to answer."""

    chat_id: int
    thread_id: int | None = None
    chat_type: str = "private"
    message_id: int | None = None  # the person's message, replied to in groups

    @property
    def private(self) -> bool:
        return self.chat_type == "private"

    @property
    def session(self) -> str:
        chat = chat_key(self.chat_id)
        return f"{chat}:{self.thread_id}" if self.thread_id is not None else chat

    @property
    def kind(self) -> str:
        """What the tools are told about the chat: private, group or topic."""
        if self.private:
            return "private"
        return "topic" if self.thread_id is not None else "group"

    @classmethod
    def from_reply_to(cls, reply_to: dict[str, Any]) -> Place:
        return cls.model_validate(reply_to)


def person(user_id: int) -> str:
    """A Telegram user as the gate, the limits and the record know them. In a private chat
    the chat's id is its person's, so `person(chat_id)` is whose chat it is."""
    return f"tg:{user_id}"


def chat_key(chat_id: int) -> str:
    """The chat's key: the session of a private chat or group, and what its forum topics'
    sessions start with; `bot.vocabulary.chats.chat_of` of any of them."""
    return f"tg:{chat_id}"


def envelope_id(update_id: int) -> str:
    """An update's envelope id: the mailbox's dedup key, so a redelivery counts once."""
    return f"tg:{update_id}"


def account(bot_id: int) -> str:
    """The bot's account, as pairing counts the codes waiting on it (`bot.people.pairing`)."""
    return f"tg:bot{bot_id}"


def user_of(person_id: str) -> int | None:
    """The Telegram user id of a person id `person` made, or None for another platform's."""
    prefix, _, rest = person_id.partition(":")
    return int(rest) if prefix == "tg" and re.fullmatch(r"[0-9]{1,20}", rest) else None
