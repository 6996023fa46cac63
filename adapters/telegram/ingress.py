"""Telegram updates in: each becomes an envelope in the session's mailbox, or a quick answer.

Handlers run on an aiogram router. They only decide and submit; the agent runs in a worker.
An update is confirmed to Telegram (the next getUpdates offset, or the webhook's 200) only
after its handler returned, so a crash or a Redis outage before that makes Telegram deliver
it again, and the mailbox's dedup on the update id answers a repeated delivery once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from aiogram import Bot, F, Router
from aiogram.enums import ChatType, MessageEntityType
from aiogram.exceptions import TelegramBadRequest, TelegramForbiddenError
from aiogram.filters import Command
from aiogram.methods import SendMessage
from aiogram.types import CallbackQuery, MessageGenerationStopped, ReplyParameters, Update, User
from aiogram.types import Message as TgMessage
from redis.asyncio import Redis

from adapters.telegram.client import TelegramCalls
from adapters.telegram.commands import Commands, command_names
from adapters.telegram.place import PLATFORM, Place, place_of, sender_of
from adapters.telegram.presses import handle_press
from bot import keys
from bot.config import Settings
from bot.confirmations import Confirmations
from bot.envelope import MAX_TEXT, Envelope
from bot.mailbox import Mailbox
from bot.store.archive import Archive

log = logging.getLogger(__name__)
ONLY_TEXT = "I can only read text here. Send me your question as a message."
TOO_LONG = "That message is too long for me ({n} characters; the limit is {limit})."
REFUSAL = (
    "Sorry, this assistant is private. Ask its owner to add you: your id is {id}. "
    "(I will not repeat this message.)"
)
REFUSAL_MEMORY = 30 * 86_400


@dataclass(frozen=True)
class IngressDeps:
    settings: Settings
    bot: Bot
    me: User
    calls: TelegramCalls
    redis: Redis
    mailbox: Mailbox
    confirmations: Confirmations
    archive: Archive


class Ingress:
    """The handlers; `router()` wires them with their filters."""

    def __init__(self, deps: IngressDeps) -> None:
        self.deps = deps
        self.username = (deps.me.username or "").lower()

    def router(self) -> Router:
        commands = Commands(self)
        router = Router(name="parley")
        router.message.register(commands.handle, Command(*command_names()))
        router.message.register(self.on_text, F.text | F.caption)
        router.message.register(self.on_other)
        router.callback_query.register(self.on_press)
        router.stopped_message_generation.register(self.on_stop_generation)
        return router

    # --- messages -------------------------------------------------------------------------

    async def on_text(self, message: TgMessage, event_update: Update) -> None:
        text = self.addressed(message)
        if text is None or message.from_user is None or message.from_user.is_bot:
            return  # other bots are not people: answering them could start a loop
        if not await self.admit(message, message.from_user):
            return
        if len(text) > MAX_TEXT:
            await self.answer(message, TOO_LONG.format(n=len(text), limit=MAX_TEXT))
            return
        await self.submit(message, event_update, text)

    async def on_other(self, message: TgMessage) -> None:
        """Stickers, photos without a caption, voice...; service messages are not for us."""
        if message.from_user is None or _is_service(message):
            return
        if self.addressed(message, require_text=False) is None:
            return
        if await self.admit(message, message.from_user):
            await self.answer(message, ONLY_TEXT)

    async def submit(
        self,
        message: TgMessage,
        update: Update,
        text: str,
        kind: Literal["message", "command"] = "message",
    ) -> bool:
        assert message.from_user is not None
        place = place_of(message)
        envelope = Envelope(
            id=f"tg:{update.update_id}",
            session=place.session,
            kind=kind,
            text=text,
            sender=sender_of(message.from_user, self.deps.settings),
            platform=PLATFORM,
            chat_kind=place.kind,
            reply_to=place.model_dump(),
        )
        submitted = await self.deps.mailbox.submit(envelope)
        return submitted.accepted

    def addressed(self, message: TgMessage, *, require_text: bool = True) -> str | None:
        """The text meant for the bot, without its @mention; None if not meant for it."""
        text = message.text or message.caption or ""
        if require_text and not text.strip():
            return None
        if message.chat.type == ChatType.PRIVATE:
            return text
        mention = f"@{self.username}"
        mentioned = bool(self.username) and any(
            e.type == MessageEntityType.MENTION and e.extract_from(text).lower() == mention
            for e in (message.entities or message.caption_entities or [])
        )
        replied = message.reply_to_message is not None and (
            message.reply_to_message.from_user is not None
            and message.reply_to_message.from_user.id == self.deps.me.id
        )
        everything = self.deps.settings.telegram_group_trigger == "all"
        if not (mentioned or replied or everything):
            return None
        if mentioned:
            cleaned = _strip_mention(text, mention)
            return cleaned or text
        return text

    async def admit(self, message: TgMessage, user: User) -> bool:
        """Whether `user` may talk to the bot; a stranger is told so once, at no model cost."""
        person = f"tg:{user.id}"
        if self.deps.settings.may_use(person):
            return True
        first = await self.deps.redis.set(
            keys.telegram_refused(user.id), "1", nx=True, ex=REFUSAL_MEMORY
        )
        if first:
            await self.answer(message, REFUSAL.format(id=person))
        log.info("refused %s in chat %s", person, message.chat.id)
        return False

    async def answer(self, message: TgMessage, text: str) -> None:
        """A direct answer from ingress (help, refusals): replied to in groups."""
        place = place_of(message)
        reply = None
        if not place.private:
            reply = ReplyParameters(message_id=message.message_id, allow_sending_without_reply=True)
        method = SendMessage(
            chat_id=place.chat_id,
            message_thread_id=place.thread_id,
            text=text,
            reply_parameters=reply,
        )
        try:
            await self.deps.calls.call(method, place.chat_id, must_land=True)
        except (TelegramBadRequest, TelegramForbiddenError) as exc:
            log.warning("cannot answer in chat %s: %s", place.chat_id, exc)

    # --- buttons and the draft's stop button ----------------------------------------------

    async def on_press(self, query: CallbackQuery) -> None:
        await handle_press(self, query)

    async def on_stop_generation(self, stopped: MessageGenerationStopped) -> None:
        place = Place(
            chat_id=stopped.chat.id,
            thread_id=stopped.message_thread_id,
            chat_type=stopped.chat.type,
        )
        await self.deps.mailbox.stop(place.session)


def _strip_mention(text: str, mention: str) -> str:
    index = text.lower().find(mention)
    if index < 0:
        return text.strip()
    return (text[:index] + text[index + len(mention) :]).strip(" \n,:")


def _is_service(message: TgMessage) -> bool:
    return any(
        getattr(message, field, None)
        for field in (
            "new_chat_members",
            "left_chat_member",
            "new_chat_title",
            "new_chat_photo",
            "delete_chat_photo",
            "group_chat_created",
            "supergroup_chat_created",
            "pinned_message",
            "forum_topic_created",
            "forum_topic_edited",
            "forum_topic_closed",
            "forum_topic_reopened",
            "migrate_to_chat_id",
            "migrate_from_chat_id",
        )
    )
