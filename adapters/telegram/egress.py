"""Telegram egress for the worker: a reply stream per turn, and expired prompts settled."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from aiogram.methods import EditMessageText
from aiogram.types import MessageEntity
from redis.asyncio import Redis

from adapters.replies import ReplyStore
from adapters.telegram import confirm
from adapters.telegram.client import TelegramCalls, make_bot
from adapters.telegram.place import Place
from adapters.telegram.stream import TelegramReply
from bot.config import Settings
from bot.confirmations import Confirmation
from bot.envelope import Envelope
from bot.ratelimit import RateBudget

log = logging.getLogger(__name__)


class TelegramEgress:
    def __init__(self, calls: TelegramCalls, store: ReplyStore) -> None:
        self.calls = calls
        self.store = store

    def open(self, envelopes: Sequence[Envelope]) -> TelegramReply:
        head = envelopes[0]
        return TelegramReply(self.calls, self.store, Place.from_reply_to(head.reply_to), head.id)

    async def settled(self, record: Confirmation) -> None:
        """An expired prompt says so and loses its buttons, so nobody presses it in vain."""
        found = await self.store.load_prompt(record.id)
        if found is None:
            return
        chat_id, message_id = int(found["chat_id"]), int(found["message_id"])
        shown = confirm.settled(confirm.Prompt(found["text"], found["entities"]), record.status)
        await self.calls.quietly(
            EditMessageText(
                chat_id=chat_id,
                message_id=message_id,
                text=shown.text,
                entities=[MessageEntity.model_validate(e) for e in shown.entities],
                reply_markup=None,
            ),
            chat_id,
        )

    async def aclose(self) -> None:
        await self.calls.bot.session.close()


def build_egress(settings: Settings, redis: Redis) -> TelegramEgress:
    """A worker's Telegram egress; `adapters.egresses` imports this module only when
    TELEGRAM_BOT_TOKEN is set."""
    calls = TelegramCalls(make_bot(settings), RateBudget(redis), settings)
    return TelegramEgress(calls, ReplyStore(redis, "tg"))
