"""A Telegram message's place and sender, read from aiogram's types; the names themselves
(`Place`, the `tg:` keys) are made in `adapters.places.telegram`, which needs no aiogram.
"""

from __future__ import annotations

from aiogram.types import Message, User

from adapters.places.telegram import Place, person
from bot.config.settings import Settings
from bot.vocabulary.envelope import Sender


def place_of(message: Message) -> Place:
    """Where `message` was written; a thread counts only as a topic (`is_topic_message`), in
    a forum or in a private chat with topics, never a mere reply thread."""
    thread = message.message_thread_id if message.is_topic_message else None
    return Place(
        chat_id=message.chat.id,
        thread_id=thread,
        chat_type=message.chat.type,
        message_id=message.message_id,
    )


def sender_of(user: User, settings: Settings) -> Sender:
    who = person(user.id)
    name = user.full_name + (f" (@{user.username})" if user.username else "")
    return Sender(id=who, name=name, is_admin=settings.is_admin(who))
