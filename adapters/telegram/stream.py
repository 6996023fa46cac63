"""One streamed reply in Telegram: a draft in private chats, a message edited in place elsewhere.

The pump, the pacing, the last update that must land and the crash-safe message ids are
shared by every platform (adapters/reply_stream.py); this module holds what is Telegram's.
Updates keep the pace of the chat (a second for edits, half a second for drafts). In a
private chat the text so far shows as a draft that the last update replaces with real
messages; elsewhere a message is edited in place. A reply longer than one message continues
in new messages (split by `render`, never inside a code block that fits one message).
Intermediate updates render partial markdown safely; if Telegram still refuses the
formatting, the text is sent plain. While the model thinks or a tool runs, the chat shows
"typing".
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import Callable
from typing import Any

from aiogram.exceptions import TelegramBadRequest, TelegramForbiddenError
from aiogram.methods import (
    DeleteMessage,
    EditMessageText,
    SendChatAction,
    SendMessage,
    SendMessageDraft,
)
from aiogram.types import MessageEntity, ReplyParameters

from adapters.replies import ReplyStore
from adapters.reply_stream import Edit, StreamedReply
from adapters.telegram import confirm
from adapters.telegram.client import TelegramCalls
from adapters.telegram.place import Place
from adapters.telegram.render import Chunk, plain, render
from bot.redis.ratelimit import Scope
from bot.vocabulary import events as ev

log = logging.getLogger(__name__)
TYPING_EVERY = 4.5
PARSE_ERROR = "can't parse entities"


def draft_id(envelope_id: str) -> int:
    """A stable, non-zero 31-bit id: the same turn keeps animating the same draft."""
    return zlib.crc32(envelope_id.encode()) % (2**31 - 1) + 1


class TelegramReply(StreamedReply[TelegramCalls, int, Chunk]):
    """A `ReplyStream` for one turn; see the module docstring."""

    undeliverable = (TelegramBadRequest, TelegramForbiddenError)

    def __init__(self, calls: TelegramCalls, store: ReplyStore, place: Place, key: str) -> None:
        super().__init__(calls, store, key, place.session)
        self.place = place
        self.drafting = place.private

    def pace(self) -> float:
        return self.calls.pace(self.place.chat_id, draft=self.drafting)

    def scopes(self) -> list[Scope]:
        return self.calls.scopes(self.place.chat_id, draft=self.drafting)

    def message_id(self, stored: Any) -> int:
        return int(stored)

    async def started(self) -> None:
        self.in_background(self._keep_typing())

    async def _keep_typing(self) -> None:
        action = SendChatAction(
            chat_id=self.place.chat_id, action="typing", message_thread_id=self.place.thread_id
        )
        while True:
            if not self.transcript.current or self.transcript.tool:
                await self.calls.quietly(action)
            await asyncio.sleep(TYPING_EVERY)

    # --- showing ----------------------------------------------------------------------------

    async def show(self, *, must_land: bool) -> None:
        tool = self.transcript.tool
        text = self.transcript.body(f"🔧 {tool}…" if tool and not must_land else "")
        if not text:
            return
        chunks = render(text, complete=must_land)  # the update that must land is the last one
        if self.drafting and not must_land:
            for index, chunk in enumerate(chunks[:-1]):
                if not await self.ensure(index, chunk, must_land=False):
                    return
            if await self._draft(chunks[-1]):
                return
        for index, chunk in enumerate(chunks):
            if not await self.ensure(index, chunk, must_land=must_land):
                return  # skipped for now (budget): the next update starts again from here
        if must_land:
            await self.drop_extra(len(chunks))

    async def _draft(self, chunk: Chunk) -> bool:
        """Show `chunk` as the draft; False when drafts are refused here (then edit instead)."""
        method = SendMessageDraft(
            chat_id=self.place.chat_id,
            draft_id=draft_id(self.key),
            message_thread_id=self.place.thread_id,
            text=chunk.text,
            entities=_entities(chunk),
            can_stop=True,
        )
        try:
            await self._call(method, must_land=False, draft=True)
        except TelegramBadRequest as exc:
            if PARSE_ERROR in exc.message:
                return True  # a preview only: the last update falls back to plain text
            log.info("drafts refused in %s (%s); editing a message instead", self.place, exc)
            self.drafting = False
            return False
        return True

    async def edit(self, message_id: int, content: Chunk, *, must_land: bool) -> Edit:
        def method(part: Chunk) -> EditMessageText:
            return EditMessageText(
                chat_id=self.place.chat_id,
                message_id=message_id,
                text=part.text,
                entities=_entities(part),
            )

        try:
            done = await self._formatted(method, content, must_land=must_land)
        except TelegramBadRequest as exc:
            if "message to edit not found" in exc.message:
                return Edit.GONE
            raise
        return Edit.SKIPPED if done is None else Edit.LANDED

    async def post(self, index: int, content: Chunk, *, must_land: bool) -> int | None:
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
                entities=_entities(part),
                reply_parameters=reply,
            )

        sent = await self._formatted(method, content, must_land=must_land)
        return sent.message_id if sent is not None else None

    async def delete(self, message_id: int) -> None:
        await self.calls.quietly(DeleteMessage(chat_id=self.place.chat_id, message_id=message_id))

    async def _formatted(
        self, method: Callable[[Chunk], Any], chunk: Chunk, *, must_land: bool
    ) -> Any:
        """Send with entities; if Telegram refuses them, send the same text plain."""
        try:
            return await self._call(method(chunk), must_land=must_land)
        except TelegramBadRequest as exc:
            if PARSE_ERROR not in exc.message:
                raise
            log.warning("Telegram refused the formatting (%s); sending plain text", exc)
            return await self._call(method(plain(chunk.text)[0]), must_land=must_land)

    async def _call(self, method: Any, *, must_land: bool, draft: bool = False) -> Any:
        chat_id = self.place.chat_id
        return await self.calls.call(
            method, chat_id, must_land=must_land, draft=draft, slot=self.slot
        )

    # --- the approval prompt ----------------------------------------------------------------

    async def post_prompt(
        self, event: ev.ConfirmationRequired, expires_in: float
    ) -> dict[str, Any] | None:
        assert event.confirmation_id is not None
        shown = confirm.prompt(event.calls, expires_in)
        message = await self.calls.call(
            SendMessage(
                chat_id=self.place.chat_id,
                message_thread_id=self.place.thread_id,
                text=shown.text,
                entities=[MessageEntity.model_validate(e) for e in shown.entities],
                reply_markup=confirm.keyboard(
                    event.confirmation_id, can_remember=event.can_remember
                ),
            ),
            self.place.chat_id,
            must_land=True,
        )
        if message is None:
            return None
        return {"chat_id": self.place.chat_id, "message_id": message.message_id} | shown.__dict__


def _entities(chunk: Chunk) -> list[MessageEntity] | None:
    return [MessageEntity.model_validate(e) for e in chunk.entities] or None
