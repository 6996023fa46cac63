"""The Bot API calls on a streamed reply's messages in one chat (or topic): post, edit,
delete and the private chat's draft, each through the shared budget, and sent again as plain
text when Telegram refuses the formatting."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from aiogram.exceptions import TelegramBadRequest
from aiogram.methods import DeleteMessage, EditMessageText, SendMessage, SendMessageDraft
from aiogram.types import MessageEntity, ReplyParameters

from adapters.chat.pacing import Slot
from adapters.chat.reply_messages import Edit
from adapters.places.telegram import Place
from adapters.telegram.client import TelegramCalls
from adapters.telegram.render import Chunk, plain

log = logging.getLogger(__name__)
PARSE_ERROR = "can't parse entities"


class TelegramWire:
    """The Bot API calls on a reply's messages in one chat (or topic)."""

    def __init__(self, calls: TelegramCalls, place: Place) -> None:
        self.calls = calls
        self.place = place

    def message_id(self, stored: Any) -> int:
        return int(stored)

    async def edit(
        self, message_id: int, content: Chunk, *, must_land: bool, slot: Slot | None
    ) -> Edit:
        def method(part: Chunk) -> EditMessageText:
            return EditMessageText(
                chat_id=self.place.chat_id,
                message_id=message_id,
                text=part.text,
                entities=entities(part),
            )

        try:
            done = await self._formatted(method, content, must_land=must_land, slot=slot)
        except TelegramBadRequest as exc:
            if "message to edit not found" in exc.message:
                return Edit.GONE
            raise
        return Edit.SKIPPED if done is None else Edit.LANDED

    async def post(
        self, index: int, content: Chunk, *, must_land: bool, slot: Slot | None
    ) -> int | None:
        reply = None
        if index == 0 and not self.place.private and self.place.message_id is not None:
            reply = ReplyParameters(
                message_id=self.place.message_id, allow_sending_without_reply=True
            )

        def method(part: Chunk) -> SendMessage:
            return SendMessage(
                chat_id=self.place.chat_id,
                message_thread_id=self.place.thread_id,
                text=part.text,
                entities=entities(part),
                reply_parameters=reply,
            )

        sent = await self._formatted(method, content, must_land=must_land, slot=slot)
        return sent.message_id if sent is not None else None

    async def delete(self, message_id: int) -> None:
        await self.calls.quietly(DeleteMessage(chat_id=self.place.chat_id, message_id=message_id))

    async def draft(self, draft: int, chunk: Chunk, *, slot: Slot | None) -> Any:
        """Show `chunk` as the chat's draft `draft` (private chats only)."""
        method = SendMessageDraft(
            chat_id=self.place.chat_id,
            draft_id=draft,
            message_thread_id=self.place.thread_id,
            text=chunk.text,
            entities=entities(chunk),
            can_stop=True,
        )
        return await self.call(method, must_land=False, draft=True, slot=slot)

    async def _formatted(
        self, method: Callable[[Chunk], Any], chunk: Chunk, *, must_land: bool, slot: Slot | None
    ) -> Any:
        """Send with entities; if Telegram refuses them, send the same text plain."""
        try:
            return await self.call(method(chunk), must_land=must_land, slot=slot)
        except TelegramBadRequest as exc:
            if PARSE_ERROR not in exc.message:
                raise
            log.warning("Telegram refused the formatting (%s); sending plain text", exc)
            plain_method = method(plain(chunk.text)[0])
            return await self.call(plain_method, must_land=must_land, slot=slot)

    async def call(
        self, method: Any, *, must_land: bool, draft: bool = False, slot: Slot | None = None
    ) -> Any:
        chat_id = self.place.chat_id
        return await self.calls.call(method, chat_id, must_land=must_land, draft=draft, slot=slot)


def entities(chunk: Chunk) -> list[MessageEntity] | None:
    return [MessageEntity.model_validate(e) for e in chunk.entities] or None
