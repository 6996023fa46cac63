"""A Telegram message's files (an album's too), for the intake (`adapters.chat.intake.Files`):
what it announces (the photo size it will take, a document's name and size, for each part of
an album), and the downloads, side by side, made only once the message passed every other step.

Telegram keeps a photo in several sizes (its long edge at 90, 320, 800, 1280 and 2560 px, as
large as the original allows); the one taken is the largest that fits what a model is sent
(`LONG_EDGE`): it needs no scaling here, only checking, and is the smaller download (1280 px
rather than 2560 px, of which a model would see 1568). A document is taken as it was sent; what it
is comes from its bytes. A voice note, an audio file and a video note are recordings: their
length, which Telegram says, is checked before the download, and their bytes are heard
rather than stored (`bot.files.voice`). The Bot API lets a bot download files of up to 20 MB
(a local Bot API server, through `TELEGRAM_API_URL`, lifts that); a larger one is refused in
one sentence.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest, TelegramNetworkError
from aiogram.types import Audio, Message, PhotoSize, VideoNote, Voice
from aiohttp import ClientError

from adapters.chat.intake import Files
from bot.files.intake import Arrived, Refused, called
from bot.vocabulary.files import LONG_EDGE

PHOTO_NAME = "photo.jpg"  # Telegram sends photos as JPEG and gives them no name
VOICE_NAME = "voice note"  # as a refusal names a recording Telegram gives no name
VIDEO_NOTE_NAME = "video note"


def best_photo(sizes: list[PhotoSize]) -> PhotoSize:
    """The largest size that fits `LONG_EDGE`, else the smallest (scaled when it arrives)."""
    ordered = sorted(sizes, key=lambda size: size.width * size.height)
    fitting = [s for s in ordered if max(s.width, s.height) <= LONG_EDGE]
    return fitting[-1] if fitting else ordered[0]


def files_of(messages: Sequence[Message], bot: Bot) -> Files | None:
    """The photos, documents or recordings of `messages` (one, or an album's parts), or None
    when they carry none; an album's are downloaded side by side."""
    parts = [part for part in map(_file_of, messages) if part is not None]
    if not parts:
        return None

    async def fetch() -> list[Arrived]:
        return list(await asyncio.gather(*(_download(bot, *part) for part in parts)))

    # A size Telegram did not say is checked on the bytes once they are here.
    recordings = tuple(duration for *_, duration in parts if duration is not None)
    return Files(tuple((name, size or 1) for _, name, size, _ in parts), fetch, recordings)


def _file_of(message: Message) -> tuple[str, str, int | None, float | None] | None:
    """The file id, name and size of the photo, document or recording `message` carries,
    and a recording's length."""
    if message.photo:
        photo = best_photo(message.photo)
        return photo.file_id, PHOTO_NAME, photo.file_size, None
    if message.document is not None:
        document = message.document
        return document.file_id, document.file_name or "", document.file_size, None
    if (recording := recording_of(message)) is not None:
        name = _recording_name(recording)
        return recording.file_id, name, recording.file_size, float(recording.duration)
    return None


def recording_of(message: Message) -> Voice | Audio | VideoNote | None:
    """The voice note, audio file or video note `message` carries, if any."""
    return message.voice or message.audio or message.video_note


def _recording_name(recording: Voice | Audio | VideoNote) -> str:
    if isinstance(recording, Audio):
        return recording.file_name or recording.title or ""
    return VOICE_NAME if isinstance(recording, Voice) else VIDEO_NOTE_NAME


async def _download(
    bot: Bot, file_id: str, name: str, size: int | None, length: float | None
) -> Arrived:
    """The file's bytes; a recording (one with a `length`) is told apart for `hear`."""
    said = called(name)
    try:
        downloaded = await bot.download(file_id)
    except TelegramBadRequest as exc:  # "file is too big", or a file gone meanwhile
        raise Refused(f"{said}: Telegram did not hand it over ({exc.message})") from None
    except (TelegramNetworkError, ClientError, TimeoutError):  # told, not dropped in retries
        again = "Telegram did not hand it over in time; send it again"
        raise Refused(f"{said}: {again}") from None
    assert downloaded is not None  # a download to no destination returns its buffer
    return Arrived(downloaded.read(), name, recording=length is not None)
