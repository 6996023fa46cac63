"""Bot API calls that respect Telegram's flood limits across every process.

The pacing itself is shared (adapters/chat/pacing.py); what is Telegram's is the scopes a call
counts against (the chat, the group's per-minute allowance, the whole bot, and drafts with
an allowance of their own), the steady pace of a streamed reply in a chat, and which answers
mean "wait": a 429 pauses its chat for everyone for exactly its `retry_after`. An edit that
changes nothing ("message is not modified") is not a failure.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.exceptions import (
    TelegramBadRequest,
    TelegramNetworkError,
    TelegramRetryAfter,
    TelegramServerError,
)
from aiogram.methods import TelegramMethod

from adapters.chat.pacing import PacedCalls, Slot
from bot.config.settings import ConfigError, Settings
from bot.redis.ratelimit import RateBudget, Scope

T = TypeVar("T")
NOT_MODIFIED = "message is not modified"


def make_bot(settings: Settings) -> Bot:
    """An aiogram Bot for `TELEGRAM_API_URL` (the public API, a local Bot API server, a fake)."""
    if settings.telegram_bot_token is None:
        raise ConfigError("TELEGRAM_BOT_TOKEN: not set (ask @BotFather for one)")
    session = AiohttpSession(api=TelegramAPIServer.from_base(settings.telegram_api_url))
    return Bot(
        settings.telegram_bot_token.get_secret_value(),
        session=session,
        default=DefaultBotProperties(link_preview_is_disabled=True),
    )


def is_private(chat_id: int) -> bool:
    """Users have positive ids; groups and channels negative ones."""
    return chat_id > 0


class TelegramCalls(PacedCalls):
    """Bot API calls under the shared rate budget, in Telegram's scopes; see the module
    docstring."""

    transient = (TelegramNetworkError, TelegramServerError)
    platform = "telegram"

    def __init__(self, bot: Bot, budget: RateBudget, settings: Settings) -> None:
        super().__init__(budget)
        self.bot = bot
        self.drafts = settings.telegram_stream == "draft"  # in private chats
        self.ephemeral_prompts = settings.telegram_ephemeral_prompts  # in groups
        self.chat_rate = settings.telegram_chat_rate
        self.group_rate = settings.telegram_group_rate
        # Telegram allows the bot about a second's worth of calls at once; a third of it is
        # left unused, so calls that reach it closer together than their tokens were taken
        # (hundreds of chats at once, from several workers) still find room.
        rate = settings.telegram_bot_rate
        self.bot_scope = Scope("tg:bot", rate=rate, burst=max(1.0, rate * 2 / 3))

    def scopes(self, chat_id: int, *, draft: bool = False) -> list[Scope]:
        if draft:  # drafts are ephemeral previews with an allowance of their own
            return [Scope(f"tg:draft:{chat_id}", rate=2, burst=3), self.bot_scope]
        scopes = [Scope(f"tg:chat:{chat_id}", rate=self.chat_rate, burst=3), self.bot_scope]
        if not is_private(chat_id):
            # A burst one short of Telegram's: calls reach it a little apart from when their
            # tokens were taken, and the minute's allowance must hold even then.
            scopes.append(Scope(f"tg:group:{chat_id}", rate=self.group_rate, burst=4))
        return scopes

    def pace(self, chat_id: int, *, draft: bool = False) -> float:
        """Seconds between two updates of one streamed reply: the steady rate of the chat (or
        of its drafts), never its burst, which other calls in the chat may need."""
        return 1 / self.scopes(chat_id, draft=draft)[0].rate

    def retry_after(self, exc: Exception) -> float | None:
        return float(exc.retry_after) if isinstance(exc, TelegramRetryAfter) else None

    async def call(
        self,
        method: TelegramMethod[T],
        chat_id: int,
        *,
        must_land: bool,
        draft: bool = False,
        slot: Slot | None = None,
    ) -> T | None:
        """The method's result (True for an edit that changed nothing); None when a call
        that may be skipped was skipped."""
        scopes = self.scopes(chat_id, draft=draft)
        name = method.__api_method__
        return await self.paced(
            lambda: self._send(method), scopes, must_land=must_land, slot=slot, method=name
        )

    async def quietly(self, method: TelegramMethod[Any], chat_id: int | None = None) -> Any:
        """A call whose failure must not break anything (typing, answering a press, updating
        a prompt); a message in `chat_id` is paced like every other call in that chat."""
        scopes = self.scopes(chat_id) if chat_id is not None else [self.bot_scope]
        return await self.paced_quietly(lambda: self._send(method), scopes, method.__api_method__)

    async def _send(self, method: TelegramMethod[T]) -> T | None:
        try:
            return await self.bot(method)
        except TelegramBadRequest as exc:
            if NOT_MODIFIED in exc.message:
                # The message already shows this: as good as an edit, and not None, which
                # says a call was skipped and its update is still to be made.
                return cast(T, True)
            raise
