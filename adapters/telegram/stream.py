"""One streamed reply in Telegram: a draft in private chats, a message edited in place elsewhere.

The pump, the pacing, the last update that must land and the crash-safe message ids are
shared by every platform (`adapters.chat.reply_stream`, `adapters.chat.reply_messages`); this module
holds Telegram's surface, how a reply shows, and `adapters.telegram.wire` its calls.
Updates keep the pace of the chat (a second for edits, half a second for drafts). In a
private chat the text so far shows as a draft that the last update replaces with real
messages (unless PARLEY_TELEGRAM_STREAM=edit: some clients keep a stale draft painted);
elsewhere a message is edited in place. A reply longer than one message continues
in new messages (split by `render`, never inside a code block that fits one message). The
model's thinking, where the turn shows it, is a quote above the answer, folded (an expandable
blockquote) once the answer begins.
Intermediate updates render partial markdown safely; if Telegram still refuses the
formatting, the text is sent plain. A reply whose first words have not shown a second after
the turn began, or whose tool runs that long, shows "typing" meanwhile; a quick reply never
does (its words are what the person sees, and the call would spend the chat's budget for
nothing). A file a tool made is posted as a photo or a document (`adapters.telegram.uploads`).
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from aiogram.exceptions import TelegramBadRequest, TelegramForbiddenError
from aiogram.methods import (
    SendChatAction,
    SendMessage,
)
from aiogram.types import MessageEntity

from adapters.chat.pacing import Slot
from adapters.chat.questions import as_asked
from adapters.chat.replies import ReplyStore
from adapters.chat.reply_messages import Messages
from adapters.chat.reply_stream import QuietSurface, StreamedReply, seal_above
from adapters.chat.transcript import Transcript
from adapters.places.telegram import Place
from adapters.telegram import ask, confirm, ephemeral
from adapters.telegram.client import TelegramCalls
from adapters.telegram.render import Chunk, under_heard
from adapters.telegram.uploads import Uploads
from adapters.telegram.wire import PARSE_ERROR, TelegramWire
from bot.files.store import FileStore
from bot.redis.ratelimit import Scope
from bot.vocabulary import events as ev

log = logging.getLogger(__name__)
TYPING_AFTER = 1.0  # s without text (or with a tool running) before "typing" shows
TYPING_EVERY = 4.5  # Telegram shows it for 5 s
THOUGHT_SHOWN = 1500  # characters of the model's thinking above a reply, its latest


def draft_id(envelope_id: str) -> int:
    """A stable, non-zero 31-bit id: the same turn keeps animating the same draft."""
    return zlib.crc32(envelope_id.encode()) % (2**31 - 1) + 1


def telegram_reply(
    calls: TelegramCalls,
    store: ReplyStore,
    files: FileStore,
    place: Place,
    key: str,
    heard: str = "",
    *,
    finished: Callable[[], Awaitable[None]] | None = None,
    joined: Callable[[Sequence[str]], Awaitable[None]] | None = None,
    fresh: bool = False,
) -> StreamedReply:
    """The reply to the turn whose first envelope is `key`, in `place`, under what was
    `heard` in the person's voice notes (`adapters.chat.transcript.heard_in`); the files it
    posts are read from `files`. `finished` runs once the turn is over (its messages' 👀
    taken away), `joined` with the envelopes that joined it (`bot.vocabulary.steering`);
    `fresh`: nothing was posted for it yet (`Egress.open`)."""
    transcript = Transcript(heard)
    transcript.heard_inline = False  # a collapsed quote of its own (`render.under_heard`)
    transcript.thought_limit = THOUGHT_SHOWN
    wire = TelegramWire(calls, place)
    messages: Messages[int, Chunk] = Messages(wire, store, key, fresh=fresh)
    surface = TelegramSurface(wire, messages, transcript, draft_id(key), Uploads(wire, files))
    surface.on_finished, surface.on_joined = finished, joined
    return StreamedReply(calls, surface, messages, transcript, place.session)


class TelegramSurface(QuietSurface):
    """How a reply shows in Telegram: a draft in private chats, then messages."""

    undeliverable: tuple[type[Exception], ...] = (TelegramBadRequest, TelegramForbiddenError)

    def __init__(
        self,
        wire: TelegramWire,
        messages: Messages[int, Chunk],
        transcript: Transcript,
        draft: int,
        uploads: Uploads,
    ) -> None:
        self.wire = wire
        self.uploads = uploads
        self.calls = wire.calls
        self.place = wire.place
        self.messages = messages
        self.transcript = transcript
        self.draft = draft  # the turn keeps animating the same draft
        self.drafting = wire.place.private and self.calls.drafts  # PARLEY_TELEGRAM_STREAM
        self.on_finished: Callable[[], Awaitable[None]] | None = None
        self.on_joined: Callable[[Sequence[str]], Awaitable[None]] | None = None

    async def joined(self, event: ev.Joined) -> None:
        if self.on_joined is not None:
            await self.on_joined(event.envelope_ids)  # as quietly as `finished`

    async def finished(self) -> None:
        if self.on_finished is not None:
            await self.on_finished()  # it fails quietly: a reaction is never in the way

    def pace(self) -> float:
        return self.calls.pace(self.place.chat_id, draft=self.drafting)

    def scopes(self) -> list[Scope]:
        return self.calls.scopes(self.place.chat_id, draft=self.drafting)

    def beside(self) -> Coroutine[Any, Any, None]:
        return self._keep_typing()

    async def _keep_typing(self) -> None:
        action = SendChatAction(
            chat_id=self.place.chat_id, action="typing", message_thread_id=self.place.thread_id
        )
        await asyncio.sleep(TYPING_AFTER)
        while True:
            if not self.transcript.current or self.transcript.tool:
                await self.calls.quietly(action)
            await asyncio.sleep(TYPING_EVERY)

    async def show(self, *, must_land: bool, slot: Slot | None) -> None:
        tool = self.transcript.tool
        text = self.transcript.body(f"🔧 {tool}…" if tool and not must_land else "")
        if not text:
            return
        # the update that must land is the last one; once the answer has begun, the
        # thinking above it folds away
        answering = bool(self.transcript.done or self.transcript.current)
        fold = bool(self.transcript.thought()) and answering
        chunks = under_heard(self.transcript.heard, text, complete=must_land, fold=fold)
        ensure = self.messages.ensure
        if self.drafting and not must_land:
            for index, chunk in enumerate(chunks[:-1]):
                if not await ensure(index, chunk, must_land=False, slot=slot):
                    return
            if await self._draft(chunks[-1], slot):
                return
        for index, chunk in enumerate(chunks):
            if not await ensure(index, chunk, must_land=must_land, slot=slot):
                return  # skipped for now (budget): the next update starts again from here
        if must_land:
            await self.messages.drop_extra(len(chunks))

    async def _draft(self, chunk: Chunk, slot: Slot | None) -> bool:
        """Show `chunk` as the draft; False when drafts are refused here (then edit instead)."""
        try:
            await self.wire.draft(self.draft, chunk, slot=slot)
        except TelegramBadRequest as exc:
            if PARSE_ERROR in exc.message:
                return True  # a preview only: the last update falls back to plain text
            log.info("drafts refused in %s (%s); editing a message instead", self.place, exc)
            self.drafting = False
            return False
        return True

    async def post_file(self, event: ev.FileSent) -> int:
        return await self.uploads.post(event)

    async def file_posted(self) -> None:
        await seal_above(self.transcript, self.messages)

    async def post_prompt(
        self, event: ev.ConfirmationRequired, expires_in: float
    ) -> dict[str, Any] | None:
        assert event.confirmation_id is not None
        alone = ephemeral.receiver(self.wire.calls, self.place, event.requester)
        if event.questions:
            return await self._post_questions(event, alone)
        shown = confirm.prompt(event.calls, expires_in, event.helper)
        message = await self.wire.call(
            SendMessage(
                chat_id=self.place.chat_id,
                message_thread_id=self.place.thread_id,
                text=shown.text,
                entities=[MessageEntity.model_validate(e) for e in shown.entities],
                reply_markup=confirm.keyboard(
                    event.confirmation_id, can_remember=event.can_remember
                ),
                ephemeral_message_parameters=ephemeral.parameters(alone),
            ),
            must_land=True,
        )
        if message is None:
            return None
        return ephemeral.remembered(self.place.chat_id, message, alone) | shown.__dict__

    async def _post_questions(
        self, event: ev.ConfirmationRequired, alone: int | None
    ) -> dict[str, Any] | None:
        """An `ask_user` prompt; it is drawn again from its confirmation when it changes."""
        asked = as_asked(event)
        message = await self.wire.call(
            SendMessage(
                chat_id=self.place.chat_id,
                message_thread_id=self.place.thread_id,
                text=ask.text(asked),
                reply_markup=ask.keyboard(asked),
                ephemeral_message_parameters=ephemeral.parameters(alone),
            ),
            must_land=True,
        )
        if message is None:
            return None
        return ephemeral.remembered(self.place.chat_id, message, alone)
