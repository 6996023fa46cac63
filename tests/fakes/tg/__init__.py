"""A fake of the Telegram Bot API for tests; see `server.FakeTelegram`."""

from tests.fakes.tg.model import (
    BOT_USERNAME,
    TOKEN,
    BotMessage,
    Call,
    Draft,
    FloodLimits,
    TgChat,
    TgUser,
)
from tests.fakes.tg.server import FakeTelegram

__all__ = [
    "BOT_USERNAME",
    "TOKEN",
    "BotMessage",
    "Call",
    "Draft",
    "FakeTelegram",
    "FloodLimits",
    "TgChat",
    "TgUser",
]
