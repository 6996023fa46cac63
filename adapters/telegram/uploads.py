"""Files a reply posts in Telegram: a photo where Telegram shows the bytes as one, else a document.

Telegram takes a photo of at most 10 MB whose width and height add up to at most 10,000 px
and whose sides are at most 20 to 1; an image that is not such goes as a document, as does
every other file, up to the 50 MB a bot may upload. The bytes come from the file store and
are sized up in a thread (a header read, yet still a file's read). A file goes into the
reply's chat and topic, replying where the reply's first message does, as a call that must
land under the chat's share of the shared budget, like the reply's own messages. When
Telegram refuses it all the same (its 400 "Bad Request: file is too big"), or the file is
gone from the store, the chat is told in one sentence, the log says why, and the reply is
told why (`NotPosted`), for the model to read instead of "sent".
"""

from __future__ import annotations

import asyncio
import io
import logging
from dataclasses import dataclass
from typing import Literal

from aiogram.exceptions import TelegramAPIError
from aiogram.methods import SendDocument, SendMessage, SendPhoto
from aiogram.types import BufferedInputFile, ReplyParameters

from adapters.chat.reply_stream import NotPosted
from adapters.telegram.wire import TelegramWire
from bot.files.store import FileMissing, FileStore
from bot.telemetry import metrics
from bot.vocabulary import events as ev
from bot.vocabulary.files import FileRef

log = logging.getLogger(__name__)
MB = 1_048_576
PHOTO_BYTES = 10 * MB
PHOTO_SIDES = 10_000  # width + height
PHOTO_RATIO = 20
DOCUMENT_BYTES = 50 * MB
CAPTION_UNITS = 1024
Kind = Literal["image", "document"]


@dataclass(frozen=True)
class Upload:
    data: bytes
    kind: Kind


class Uploads:
    """Posts a reply's files through `wire` (its chat, topic and budget)."""

    def __init__(self, wire: TelegramWire, files: FileStore) -> None:
        self.wire = wire
        self.files = files

    async def post(self, event: ev.FileSent) -> int:
        """The posted message's id; `NotPosted` when the file could not be posted (told)."""
        ref, place = event.file, self.wire.place
        name = ref.name or "file"
        try:
            upload = await asyncio.to_thread(upload_of, self.files, ref)
        except FileMissing as exc:
            log.warning("cannot post a file in %s: %s", place, exc)
            await self._tell(f"⚠️ I could not send “{name}”: it is no longer stored.")
            raise NotPosted("it is no longer stored") from None
        if len(upload.data) > DOCUMENT_BYTES:
            await self._tell(f"⚠️ I could not send “{name}”: Telegram takes files up to 50 MB.")
            raise NotPosted("Telegram takes files up to 50 MB")
        document = BufferedInputFile(upload.data, filename=name)
        reply = None
        if not place.private and place.message_id is not None:
            reply = ReplyParameters(message_id=place.message_id, allow_sending_without_reply=True)
        method: SendPhoto | SendDocument
        if upload.kind == "image":
            method = SendPhoto(
                chat_id=place.chat_id,
                message_thread_id=place.thread_id,
                photo=document,
                caption=caption(event.caption),
                reply_parameters=reply,
            )
        else:
            method = SendDocument(
                chat_id=place.chat_id,
                message_thread_id=place.thread_id,
                document=document,
                caption=caption(event.caption),
                reply_parameters=reply,
            )
        try:
            sent = await self.wire.call(method, must_land=True)
        except TelegramAPIError as exc:
            log.warning("Telegram refused a file in %s: %s", place, exc)
            await self._tell(f"⚠️ I could not send “{name}”: Telegram refused it.")
            raise NotPosted(f"Telegram refused it ({exc.message})") from None
        if sent is None:  # pragma: no cover (a call that must land is never skipped)
            raise NotPosted("it was not posted")
        metrics.FILES_SENT.labels("telegram", upload.kind).inc()
        return int(sent.message_id)

    async def _tell(self, text: str) -> None:
        place = self.wire.place
        message = SendMessage(chat_id=place.chat_id, message_thread_id=place.thread_id, text=text)
        await self.wire.calls.quietly(message, place.chat_id)


def caption(text: str) -> str | None:
    """At most the 1,024 UTF-16 code units Telegram takes in a caption (an emoji is two)."""
    units = text.encode("utf-16-le")[: 2 * CAPTION_UNITS]
    return units.decode("utf-16-le", errors="ignore") or None


def upload_of(files: FileStore, ref: FileRef) -> Upload:
    """The file's bytes, and whether Telegram takes them as a photo (run in a thread)."""
    data = files.read(ref)
    return Upload(data, "image" if _photo(data, ref) else "document")


def _photo(data: bytes, ref: FileRef) -> bool:
    if ref.media_type not in ("image/jpeg", "image/png", "image/webp") or len(data) > PHOTO_BYTES:
        return False  # a GIF would be a still; it goes as a document
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415 (with the first file)

    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
    except (UnidentifiedImageError, OSError):
        return False
    long, short = max(width, height), max(1, min(width, height))
    return width + height <= PHOTO_SIDES and long / short <= PHOTO_RATIO
