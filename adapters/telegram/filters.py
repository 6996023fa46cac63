"""The routers' filters, as coroutine functions.

aiogram runs a filter or a handler that is not a coroutine function with `asyncio.to_thread`,
a magic filter such as `F.text` included: for every update, each such filter it tries is a
hop to a pool thread and back (some 0.1 ms of CPU and two wake-ups of the event loop before
the update reaches the mailbox). These say what those said, in the event loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiogram.types import CallbackQuery
from aiogram.types import Message as TgMessage

# What makes a message one with files in it, an album's part included (`media_group_id`).
FILE_FIELDS = ("photo", "document", "voice", "audio", "video_note", "media_group_id")


async def has_files(tg_message: TgMessage) -> bool:
    return any(getattr(tg_message, name) for name in FILE_FIELDS)


async def has_text(tg_message: TgMessage) -> bool:
    return bool(tg_message.text or tg_message.caption)


def data_starts(prefix: str) -> Callable[[CallbackQuery], Awaitable[bool]]:
    """A button press whose data begins with `prefix`."""

    async def starts(press: CallbackQuery) -> bool:
        return press.data is not None and press.data.startswith(prefix)

    return starts
