"""One streamed reply in Telegram: a draft in private chats, a message edited in place elsewhere.

Text arrives in small deltas and is coalesced: a pump shows whatever text there is at most
once per pace of the chat (a second for edits, half a second for drafts), so a fast model
costs one call per pace, not one per token. The first update waits a short settle time
(`FIRST_UPDATE_AFTER`, never more than a pace): a reply that ends before then costs only its
final message, with no draft or edit that the final message would replace a moment later,
while a long reply still starts to show at once; from then on updates keep the pace. Once the
turn has ended no update is made but the final one. The rate budget shared with other workers
is taken on top. The final text always lands: it waits for the budget and outlasts flood
answers. A reply longer than one message continues in new messages (split by `render`, never
inside a code block that fits one message). Intermediate updates render partial markdown
safely; if Telegram still refuses the formatting, the text is sent plain.

The ids of the messages a reply posted are kept in Redis under its first envelope, so a turn
that another worker resumes after a crash edits the same messages instead of posting the
reply a second time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import zlib
from dataclasses import dataclass
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
from adapters.telegram import confirm
from adapters.telegram.client import TelegramCalls
from adapters.telegram.place import Place
from adapters.telegram.render import Chunk, plain, render
from adapters.transcript import Transcript
from bot.agent import events as ev

log = logging.getLogger(__name__)
TYPING_EVERY = 4.5
# Long enough for a short reply to end first, short enough to look instant.
FIRST_UPDATE_AFTER = 0.4
PARSE_ERROR = "can't parse entities"


def draft_id(envelope_id: str) -> int:
    """A stable, non-zero 31-bit id: the same turn keeps animating the same draft."""
    return zlib.crc32(envelope_id.encode()) % (2**31 - 1) + 1


@dataclass
class Shown:
    message_id: int
    chunk: Chunk | None  # None: posted by an earlier worker, content unknown


class TelegramReply:
    """A `ReplyStream` for one turn; see the module docstring."""

    def __init__(self, calls: TelegramCalls, store: ReplyStore, place: Place, key: str) -> None:
        self.calls = calls
        self.store = store
        self.place = place
        self.key = key
        self.drafting = place.private
        self.transcript = Transcript()
        self.shown: list[Shown] | None = None
        self._dirty = asyncio.Event()
        self._ended = False  # the turn is over: only the final update is still to come
        self._pump: asyncio.Task[None] | None = None
        self._typing: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    # --- events -----------------------------------------------------------------------------

    async def send(self, event: ev.AgentEvent) -> None:
        if self._typing is None:
            self._typing = asyncio.create_task(self._keep_typing())
        if isinstance(event, ev.Completed):
            self._ended = True
        before = self._text(final=False)
        self.transcript.apply(event)
        if isinstance(event, ev.ConfirmationRequired):
            await self._finish()
            await self._ask(event)
            return
        if self._text(final=False) == before or self._ended:
            return  # nothing new to show, or the final message shows it: no call is spent
        self._dirty.set()
        if self._pump is None:
            self._pump = asyncio.create_task(self._run_pump())

    async def close(self) -> None:
        tasks = [task for task in (self._pump, self._typing) if task is not None]
        async with self._lock:  # an update in flight finishes first, so its message is known
            for task in tasks:
                task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.transcript.tool = ""
        try:
            await self._finish()
        except (TelegramBadRequest, TelegramForbiddenError) as exc:
            # Permanent (the bot was blocked or removed, the chat is gone): trying the turn
            # again would only cost model calls. Network trouble still propagates and retries.
            log.warning("cannot deliver the reply in %s: %s", self.place.session, exc)

    def _text(self, *, final: bool) -> str:
        tool = self.transcript.tool
        return self.transcript.body(f"🔧 {tool}…" if tool and not final else "")

    # --- pacing -----------------------------------------------------------------------------

    async def _run_pump(self) -> None:
        """Show the newest text once a pace, from a settle time after the first text on (see
        the module docstring); coalesces everything in between."""
        due = time.monotonic() + min(self._pace(), FIRST_UPDATE_AFTER)
        while True:
            await self._dirty.wait()
            await asyncio.sleep(due - time.monotonic())
            if self._ended:
                return
            await self.calls.budget.take(self.calls.scopes(self.place.chat_id, draft=self.drafting))
            if self._ended:
                return
            self._dirty.clear()
            try:
                async with self._lock:
                    await self._show(final=False, prepaid=True)
            except Exception as exc:  # an intermediate update; the final one reports failures
                log.warning("streaming update in %s failed: %s", self.place.session, exc)
            due = time.monotonic() + self._pace()  # from when it was shown, not asked for

    def _pace(self) -> float:
        return self.calls.pace(self.place.chat_id, draft=self.drafting)

    async def _keep_typing(self) -> None:
        action = SendChatAction(
            chat_id=self.place.chat_id, action="typing", message_thread_id=self.place.thread_id
        )
        while True:
            if not self.transcript.current or self.transcript.tool:
                await self.calls.quietly(action)
            await asyncio.sleep(TYPING_EVERY)

    async def _finish(self) -> None:
        async with self._lock:
            await self._show(final=True, prepaid=False)

    async def _ask(self, event: ev.ConfirmationRequired) -> None:
        """Post the approval prompt with its buttons, and remember where it is."""
        if event.confirmation_id is None:
            return
        expires_in = (event.expires_at or time.time()) - time.time()
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
        if message is not None:
            record = {"chat_id": self.place.chat_id, "message_id": message.message_id}
            await self.store.save_prompt(event.confirmation_id, record | shown.__dict__)

    # --- showing ----------------------------------------------------------------------------

    async def _show(self, *, final: bool, prepaid: bool) -> None:
        text = self._text(final=final)
        if self.shown is None:
            self.shown = [Shown(int(i), None) for i in await self.store.load(self.key)]
        if not text:
            return
        chunks = render(text, final=final)
        if self.drafting and not final:
            for index, chunk in enumerate(chunks[:-1]):
                if not await self._ensure(index, chunk, final=False, prepaid=False):
                    return
            if await self._draft(chunks[-1], prepaid=prepaid):
                return
        for index, chunk in enumerate(chunks):
            if not await self._ensure(index, chunk, final=final, prepaid=prepaid and index == 0):
                return  # skipped for now (budget): the next update starts again from here
        if final:
            await self._drop_extra(len(chunks))

    async def _draft(self, chunk: Chunk, *, prepaid: bool) -> bool:
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
            await self._call(method, final=False, prepaid=prepaid, draft=True)
        except TelegramBadRequest as exc:
            if PARSE_ERROR in exc.message:
                return True  # a preview only: the final message falls back to plain text
            log.info("drafts refused in %s (%s); editing a message instead", self.place, exc)
            self.drafting = False
            return False
        return True

    async def _ensure(self, index: int, chunk: Chunk, *, final: bool, prepaid: bool) -> bool:
        """Make message `index` of the reply show `chunk`: edit it, or post it if new.

        False when an optional update was skipped for the budget and nothing was posted."""
        assert self.shown is not None
        if index < len(self.shown):
            if self.shown[index].chunk == chunk:
                return True
            edited = await self._edit(self.shown[index].message_id, chunk, final, prepaid)
            if edited:
                self.shown[index].chunk = chunk
                return True
            self.shown = self.shown[:index]  # gone (deleted by someone): post it again
        message_id = await self._post(chunk, first=index == 0, final=final, prepaid=prepaid)
        if message_id is None:
            return False
        self.shown.append(Shown(message_id, chunk))
        await self.store.save(self.key, [s.message_id for s in self.shown])
        return True

    async def _edit(self, message_id: int, chunk: Chunk, final: bool, prepaid: bool) -> bool:
        def method(part: Chunk) -> EditMessageText:
            return EditMessageText(
                chat_id=self.place.chat_id,
                message_id=message_id,
                text=part.text,
                entities=_entities(part),
            )

        try:
            await self._formatted(method, chunk, final=final, prepaid=prepaid)
        except TelegramBadRequest as exc:
            if "message to edit not found" in exc.message:
                return False
            raise
        return True

    async def _post(self, chunk: Chunk, *, first: bool, final: bool, prepaid: bool) -> int | None:
        reply = None
        if first and not self.place.private and self.place.message_id is not None:
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

        sent = await self._formatted(method, chunk, final=final, prepaid=prepaid)
        return sent.message_id if sent is not None else None

    async def _formatted(self, method: Any, chunk: Chunk, *, final: bool, prepaid: bool) -> Any:
        """Send with entities; if Telegram refuses them, send the same text plain."""
        try:
            return await self._call(method(chunk), final=final, prepaid=prepaid)
        except TelegramBadRequest as exc:
            if PARSE_ERROR not in exc.message:
                raise
            log.warning("Telegram refused the formatting (%s); sending plain text", exc)
            return await self._call(method(plain(chunk.text)[0]), final=final, prepaid=False)

    async def _call(self, method: Any, *, final: bool, prepaid: bool, draft: bool = False) -> Any:
        calls = self.calls
        if prepaid:
            return await calls.call(method, self.place.chat_id, must_land=final, paid=True)
        return await calls.call(method, self.place.chat_id, must_land=final, draft=draft)

    async def _drop_extra(self, count: int) -> None:
        """A reply that got shorter after a restart: remove what it no longer says."""
        assert self.shown is not None
        for extra in self.shown[count:]:
            await self.calls.quietly(
                DeleteMessage(chat_id=self.place.chat_id, message_id=extra.message_id)
            )
        if len(self.shown) > count:
            self.shown = self.shown[:count]
            await self.store.save(self.key, [s.message_id for s in self.shown])


def _entities(chunk: Chunk) -> list[MessageEntity] | None:
    return [MessageEntity.model_validate(e) for e in chunk.entities] or None
