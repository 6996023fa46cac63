"""Files a reply posts in Telegram: a photo where Telegram shows the bytes as one, a voice
message for a reply said aloud, else a document.

Telegram takes a photo of at most 10 MB whose width and height add up to at most 10,000 px
and whose sides are at most 20 to 1; an image that is not such goes as a document, as does
every other file, up to the 50 MB a bot may upload. The bytes come from the file store and
are sized up in a thread (a header read, yet still a file's read). A file goes into the
reply's chat and topic, replying where the reply's first message does, as a call that must
land under the chat's share of the shared budget, like the reply's own messages. When
Telegram refuses it all the same (its 400 "Bad Request: file is too big"), or the file is
gone from the store, the chat is told in one sentence, the log says why, and the reply is
told why (`NotPosted`), for the model to read instead of "sent". A person who keeps voice
messages from them (a Premium setting: Telegram's 400 VOICE_MESSAGES_FORBIDDEN) gets the
voice note as a file they can still play.
"""

from __future__ import annotations

import asyncio
import io
import logging
from dataclasses import dataclass
from typing import Literal

from aiogram.exceptions import TelegramAPIError, TelegramBadRequest
from aiogram.methods import SendDocument, SendMessage, SendPhoto, SendVoice
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
VOICE_FORBIDDEN = "VOICE_MESSAGES_FORBIDDEN"
Kind = Literal["image", "document", "voice"]
Method = SendPhoto | SendDocument | SendVoice


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
            upload = await asyncio.to_thread(upload_of, self.files, ref, event.voice_seconds)
        except FileMissing as exc:
            log.warning("cannot post a file in %s: %s", place, exc)
            await self._tell(f"⚠️ I could not send “{name}”: it is no longer stored.")
            raise NotPosted("it is no longer stored") from None
        if len(upload.data) > DOCUMENT_BYTES:
            await self._tell(f"⚠️ I could not send “{name}”: Telegram takes files up to 50 MB.")
            raise NotPosted("Telegram takes files up to 50 MB")
        method = self._method(event, upload)
        try:
            try:
                sent = await self.wire.call(method, must_land=True)
            except TelegramBadRequest as exc:
                if upload.kind != "voice" or VOICE_FORBIDDEN not in exc.message:
                    raise
                upload = Upload(upload.data, "document")  # still theirs to play
                sent = await self.wire.call(self._method(event, upload), must_land=True)
        except TelegramAPIError as exc:
            log.warning("Telegram refused a file in %s: %s", place, exc)
            await self._tell(f"⚠️ I could not send “{name}”: Telegram refused it.")
            raise NotPosted(f"Telegram refused it ({exc.message})") from None
        if sent is None:  # pragma: no cover (a call that must land is never skipped)
            raise NotPosted("it was not posted")
        if event.voice_seconds is None:
            metrics.FILES_SENT.labels("telegram", upload.kind).inc()
        return int(sent.message_id)

    def _method(self, event: ev.FileSent, upload: Upload) -> Method:
        """The call that posts `upload` as its kind, where the reply is."""
        place = self.wire.place
        file = BufferedInputFile(upload.data, filename=event.file.name or "file")
        reply = None
        if not place.private and place.message_id is not None:
            reply = ReplyParameters(message_id=place.message_id, allow_sending_without_reply=True)
        chat, topic, shown = place.chat_id, place.thread_id, caption(event.caption)
        if upload.kind == "voice":
            return SendVoice(
                chat_id=chat, message_thread_id=topic, voice=file, caption=shown,
                duration=max(1, round(event.voice_seconds or 0)), reply_parameters=reply,
            )  # fmt: skip
        if upload.kind == "image":
            return SendPhoto(
                chat_id=chat, message_thread_id=topic, photo=file, caption=shown,
                reply_parameters=reply,
            )  # fmt: skip
        return SendDocument(
            chat_id=chat, message_thread_id=topic, document=file, caption=shown,
            reply_parameters=reply,
        )  # fmt: skip

    async def _tell(self, text: str) -> None:
        place = self.wire.place
        message = SendMessage(chat_id=place.chat_id, message_thread_id=place.thread_id, text=text)
        await self.wire.calls.quietly(message, place.chat_id)


def caption(text: str) -> str | None:
    """At most the 1,024 UTF-16 code units Telegram takes in a caption (an emoji is two)."""
    units = text.encode("utf-16-le")[: 2 * CAPTION_UNITS]
    return units.decode("utf-16-le", errors="ignore") or None


def upload_of(files: FileStore, ref: FileRef, voice_seconds: float | None = None) -> Upload:
    """The file's bytes, and whether Telegram takes them as a photo, or as a voice message
    (a reply said aloud, `voice_seconds` long), in a thread."""
    data = files.read(ref)
    if voice_seconds is not None:
        return Upload(data, "voice")
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
