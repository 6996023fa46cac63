"""Prompts only their person sees, in a Telegram group (PARLEY_TELEGRAM_EPHEMERAL_PROMPTS).

With the setting on, an approval prompt or a question in a group (or a forum topic) is an
ephemeral message for the person it waits for: the others in the group see neither the
arguments nor the buttons. Telegram numbers such a message apart (`ephemeral_message_id`; its
`message_id` is 0) and edits it with `editEphemeralMessageText`, for its receiver; every
place that edits a prompt asks here which of the two edits it makes. In a private chat, or
for a person who is not a Telegram user (a task an operator set up), the prompt is an
ordinary message. An admin cannot press a prompt they do not see: they decide through the
HTTP API, or the setting stays off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aiogram.methods import EditEphemeralMessageText, EditMessageText
from aiogram.types import (
    EphemeralMessageParameters,
    InlineKeyboardMarkup,
    MessageEntity,
)
from aiogram.types import Message as TgMessage

from adapters.places.telegram import Place, user_of
from adapters.telegram.client import TelegramCalls

Edit = EditMessageText | EditEphemeralMessageText


def receiver(calls: TelegramCalls, place: Place, requester: str | None) -> int | None:
    """The Telegram user a prompt in `place` is shown to alone, or None: for everyone."""
    if not calls.ephemeral_prompts or place.private:
        return None
    return user_of(requester or "")


def parameters(user: int | None) -> EphemeralMessageParameters | None:
    return EphemeralMessageParameters(receiver_user_id=user) if user is not None else None


def remembered(chat_id: int, message: TgMessage, user: int | None) -> dict[str, Any]:
    """Where a posted prompt is, for its later edits."""
    where: dict[str, Any] = {"chat_id": chat_id, "message_id": message.message_id}
    if user is not None and message.ephemeral_message_id is not None:
        where |= {"ephemeral_message_id": message.ephemeral_message_id, "receiver": user}
    return where


def edit(
    prompt: Mapping[str, Any],
    text: str,
    entities: list[MessageEntity] | None = None,
    markup: InlineKeyboardMarkup | None = None,
) -> Edit:
    """The edit of the prompt remembered as `prompt`, ephemeral or not."""
    chat_id = int(prompt["chat_id"])
    if prompt.get("ephemeral_message_id") is not None:
        return EditEphemeralMessageText(
            chat_id=chat_id,
            receiver_user_id=int(prompt["receiver"]),
            ephemeral_message_id=int(prompt["ephemeral_message_id"]),
            text=text,
            entities=entities,
            reply_markup=markup,
        )
    return EditMessageText(
        chat_id=chat_id,
        message_id=int(prompt["message_id"]),
        text=text,
        entities=entities,
        reply_markup=markup,
    )


def pressed(message: TgMessage, presser: int) -> dict[str, Any]:
    """Where the prompt a press came from is: only its receiver could press an ephemeral
    one."""
    where: dict[str, Any] = {"chat_id": message.chat.id, "message_id": message.message_id}
    if message.ephemeral_message_id is not None:
        user = message.receiver_user.id if message.receiver_user is not None else presser
        where |= {"ephemeral_message_id": message.ephemeral_message_id, "receiver": user}
    return where
