"""Bot API calls that respect Telegram's flood limits across every process.

Each call first takes a token from the shared rate budget for the scopes it counts against
(the chat, the group's per-minute allowance, the whole bot), so replies streamed by many
workers slow down together instead of running into 429s. A 429 that still happens pauses
its chat for everyone for exactly `retry_after`; a call that must land (a final text) is then
made again, one that may be skipped (an intermediate edit) is dropped, because the next edit
carries newer text anyway.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, TypeVar

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

from bot.config import ConfigError, Settings
from bot.ratelimit import RateBudget, Scope

log = logging.getLogger(__name__)
T = TypeVar("T")
NOT_MODIFIED = "message is not modified"
ATTEMPTS = 5


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


class TelegramCalls:
    """Makes Bot API calls under the shared rate budget; see the module docstring."""

    def __init__(self, bot: Bot, budget: RateBudget, settings: Settings) -> None:
        self.bot = bot
        self.budget = budget
        self.chat_rate = settings.telegram_chat_rate
        self.group_rate = settings.telegram_group_rate
        self.bot_scope = Scope("tg:bot", rate=settings.telegram_bot_rate, burst=30)

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

    async def call(
        self,
        method: TelegramMethod[T],
        chat_id: int,
        *,
        must_land: bool,
        draft: bool = False,
        paid: bool = False,
    ) -> T | None:
        """The method's result; None when an optional call was dropped or changed nothing.

        `paid`: the caller already took this call's token from the budget."""
        scopes = self.scopes(chat_id, draft=draft)
        return await self._call(method, scopes, must_land=must_land, paid=paid)

    async def _call(
        self, method: TelegramMethod[T], scopes: list[Scope], *, must_land: bool, paid: bool = False
    ) -> T | None:
        failures = 0
        while True:
            if paid:
                paid = False
            elif must_land:
                await self.budget.take(scopes)
            elif await self.budget.try_take(scopes) > 0:
                return None  # a newer update will follow: skip this one
            try:
                return await self.bot(method)
            except TelegramRetryAfter as exc:
                await self.budget.pause(scopes[0], exc.retry_after)
                log.info("flood control on %s: waiting %s s", scopes[0].name, exc.retry_after)
                if not must_land:
                    return None
            except TelegramBadRequest as exc:
                if NOT_MODIFIED in exc.message:
                    return None
                raise
            except (TelegramNetworkError, TelegramServerError) as exc:
                failures += 1
                if failures >= ATTEMPTS or not must_land:
                    raise
                log.warning("Bot API call failed (%s); trying again", exc)
                await asyncio.sleep(min(0.25 * 2**failures, 8))

    async def quietly(self, method: TelegramMethod[Any], chat_id: int | None = None) -> Any:
        """A call whose failure must not break anything (typing, answering a press, settling
        a prompt); a message in `chat_id` is paced like every other call in that chat."""
        scopes = self.scopes(chat_id) if chat_id is not None else [self.bot_scope]
        try:
            return await self._call(method, scopes, must_land=True)
        except Exception as exc:  # cosmetic: the reason is logged, never raised
            log.warning("%s failed: %s", type(method).__name__, exc)
            return None
