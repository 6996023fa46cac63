"""Telegram egress for the worker: a reply stream per turn, and expired prompts updated."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from aiogram.methods import SendMessage
from aiogram.types import MessageEntity, ReplyParameters
from redis.asyncio import Redis

from adapters.chat.egress import ChatEgress
from adapters.chat.replies import ReplyStore
from adapters.chat.reply_stream import StreamedReply
from adapters.chat.transcript import heard_in
from adapters.places.telegram import Place, user_of
from adapters.telegram import ask, confirm, ephemeral
from adapters.telegram.client import TelegramCalls, make_bot
from adapters.telegram.reactions import StatusReactions
from adapters.telegram.render import utf16_len
from adapters.telegram.stream import telegram_reply
from bot.config.settings import Settings
from bot.files.store import FileStore
from bot.redis.confirmations import Confirmation, Status
from bot.redis.ratelimit import RateBudget
from bot.vocabulary.envelope import Envelope


class TelegramEgress(ChatEgress[TelegramCalls]):
    reactions: StatusReactions | None = None  # PARLEY_TELEGRAM_REACTIONS: 👀 taken away

    def open(self, envelopes: Sequence[Envelope], *, fresh: bool = False) -> StreamedReply:
        head = envelopes[0]
        place = Place.from_reply_to(head.reply_to)
        heard = heard_in(envelopes)
        # The turn's own list, which grows as messages join it (`bot.session.steering`): at
        # the end, the 👀 of every message it answered goes.
        reactions, answered = self.reactions, envelopes
        finished = joined = None
        if reactions is not None:
            finished = functools.partial(reactions.answered, answered)
            joined = functools.partial(reactions.taken_in, answered)
        return telegram_reply(
            self.calls, self.store, self.files, place, head.id, heard,
            finished=finished, joined=joined, fresh=fresh,
        )  # fmt: skip

    async def show_outcome(self, prompt: dict[str, Any], status: Status) -> None:
        shown = confirm.with_outcome(confirm.Prompt(prompt["text"], prompt["entities"]), status)
        entities = [MessageEntity.model_validate(e) for e in shown.entities]
        await self.calls.quietly(
            ephemeral.edit(prompt, shown.text, entities), int(prompt["chat_id"])
        )

    async def post_reminder(
        self, prompt: dict[str, Any], confirmation: Confirmation, text: str
    ) -> None:
        """A reply to the prompt, its person's name a mention (a `tg://user` link)."""
        chat_id = int(prompt["chat_id"])
        name = confirmation.requester_name.split(" (@")[0] or "You"
        user = user_of(confirmation.requester)
        entities = []
        alone = prompt.get("receiver")
        if user is not None:
            link = {"type": "text_link", "offset": 0, "length": utf16_len(name)}
            entities.append(MessageEntity.model_validate(link | {"url": f"tg://user?id={user}"}))
        await self.calls.call(
            SendMessage(
                chat_id=chat_id,
                message_thread_id=Place.from_reply_to(confirmation.reply_to).thread_id,
                text=f"{name}, {text}",
                entities=entities,
                reply_parameters=None
                if alone
                else ReplyParameters(
                    message_id=int(prompt["message_id"]), allow_sending_without_reply=True
                ),
                ephemeral_message_parameters=ephemeral.parameters(alone),
            ),
            chat_id,
            must_land=True,
        )

    async def show_answers(self, prompt: dict[str, Any], confirmation: Confirmation) -> None:
        text, markup = ask.text(confirmation), ask.keyboard(confirmation)
        await self.calls.quietly(
            ephemeral.edit(prompt, text, markup=markup), int(prompt["chat_id"])
        )

    async def aclose(self) -> None:
        await self.calls.bot.session.close()


def build_egress(settings: Settings, redis: Redis) -> TelegramEgress:
    """A worker's Telegram egress; `adapters.platforms.egresses` imports this module only when
    TELEGRAM_BOT_TOKEN is set."""
    calls = TelegramCalls(make_bot(settings), RateBudget(redis), settings)
    egress = TelegramEgress(calls, ReplyStore(redis, "tg"), FileStore(settings.files_dir))
    if settings.telegram_reactions:
        egress.reactions = StatusReactions(calls, redis)
    return egress
