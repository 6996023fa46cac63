"""Files the bot sends, as the Bot API takes them: `sendPhoto`, `sendDocument` and `sendVoice`
with the file as a part of a multipart/form-data request, named by the field itself or, as
aiogram sends it, by `attach://<part>`. Checked as Telegram checks them: the chat and topic, a
part with a file name and bytes, a caption of at most 1024 characters in a known parse mode,
the message it replies to; a photo a real image of at most 10 MB whose sides add up to
10,000 px at most and are at most 20 to 1 (else `PHOTO_INVALID_DIMENSIONS`), a document or a
voice note at most 50 MB (else a 413, as Telegram's front answers a request that large).

A voice note is what Telegram plays as one: Opus in Ogg (its length read from the stream when
the bot does not say it: the last page's granule position less the Opus pre-skip, at 48 kHz),
MP3 or M4A; any other file sent as a voice note becomes a document, as Telegram makes it. A
chat in `voice_forbidden` (a Premium user who allows no voice notes) refuses voice notes with
`VOICE_MESSAGES_FORBIDDEN`. What was sent is kept, bytes included, for the tests."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from aiohttp.web_request import FileField
from PIL import Image, UnidentifiedImageError

from tests.fakes.tg.formatting import formatted, utf16
from tests.fakes.tg.model import ApiError, TgChat, Upload, bad

if TYPE_CHECKING:
    from tests.fakes.tg.server import FakeTelegram

MB = 1024 * 1024
PHOTO_BYTES = 10 * MB
DOCUMENT_BYTES = 50 * MB
OPUS_RATE = 48_000  # Opus's granule positions count samples at 48 kHz, whatever the input was
MAX_CAPTION = 1024
PARSE_MODES = {"MarkdownV2", "HTML", "Markdown"}
# What the fake's server reads of one request: a document at the limit and the form around it.
BODY_LIMIT = DOCUMENT_BYTES + MB


def file_part(params: dict[str, Any], field: str) -> FileField:
    """The uploaded part the request names in `field`, itself or through `attach://`."""
    value = params.get(field)
    if isinstance(value, str) and value.startswith("attach://"):
        value = params.get(value.removeprefix("attach://"))
    if isinstance(value, str) and value:
        raise bad("wrong file identifier/HTTP URL specified")
    if not isinstance(value, FileField) or not value.filename:
        raise bad(f"there is no {field} in the request")
    return value


def caption_of(params: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    mode = params.get("parse_mode")
    if mode not in (None, "") and mode not in PARSE_MODES:
        raise bad(f"unsupported parse_mode {mode}")
    caption, entities = formatted(params, "caption")
    if utf16(caption) > MAX_CAPTION:
        raise bad("message caption is too long")
    return caption, entities


def check_photo(data: bytes) -> tuple[int, int]:
    if len(data) > PHOTO_BYTES:
        raise bad("file is too big")
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            width, height = image.size
    except (UnidentifiedImageError, OSError):
        raise bad("IMAGE_PROCESS_FAILED") from None
    if width + height > 10_000 or max(width, height) > 20 * min(width, height):
        raise bad("PHOTO_INVALID_DIMENSIONS")
    return width, height


class Voice(NamedTuple):
    """What Telegram says of a voice note: its type and length in seconds."""

    mime_type: str
    duration: int


def ogg_pages(data: bytes) -> Iterator[tuple[int, int, bytes]]:
    """Each whole page of an Ogg stream: its serial number, granule position and payload."""
    at = 0
    while data.startswith(b"OggS", at) and at + 27 <= len(data):
        count = data[at + 26]
        start = at + 27 + count
        end = start + sum(data[at + 27 : start])
        if end > len(data):
            return
        granule = int.from_bytes(data[at + 6 : at + 14], "little", signed=True)
        yield int.from_bytes(data[at + 14 : at + 18], "little"), granule, data[start:end]
        at = end


def opus_seconds(data: bytes) -> int | None:
    """The length of Opus in Ogg, in whole seconds (rounded); None if the first stream is not
    Opus."""
    pages = list(ogg_pages(data))
    if not pages or not pages[0][2].startswith(b"OpusHead") or len(pages[0][2]) < 19:
        return None
    serial, head = pages[0][0], pages[0][2]
    pre_skip = int.from_bytes(head[10:12], "little")
    granules = [g for s, g, _ in pages if s == serial and g >= 0]  # -1: no packet ends there
    samples = max(0, granules[-1] - pre_skip) if granules else 0
    return (samples + OPUS_RATE // 2) // OPUS_RATE


def voice_of(data: bytes, duration: int | None) -> Voice | None:
    """The voice note Telegram makes of `data`, or None if it plays no such file as one."""
    if data.startswith(b"OggS"):
        seconds = opus_seconds(data)
        if seconds is None:
            return None
        return Voice("audio/ogg", seconds if duration is None else duration)
    if data[4:8] == b"ftyp":  # an MP4 container: M4A
        return Voice("audio/mp4", duration or 0)
    if data.startswith(b"ID3") or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE6 == 0xE2):
        return Voice("audio/mpeg", duration or 0)  # an ID3 tag, or an MPEG layer III frame
    return None


def duration_of(params: dict[str, Any]) -> int | None:
    value = params.get("duration")
    if value in (None, ""):
        return None
    try:
        seconds = int(value)
    except (TypeError, ValueError):
        raise bad("invalid duration specified") from None
    if seconds < 0:
        raise bad("invalid duration specified")
    return seconds


class Uploads:
    """`sendPhoto`, `sendDocument` and `sendVoice` of the fake (called by `methods.Methods`)."""

    def __init__(self, fake: FakeTelegram) -> None:
        self.fake = fake
        self.voice_forbidden: set[int] = set()  # chats that refuse voice notes

    def send(
        self, kind: str, chat: TgChat, thread: int | None, params: dict[str, Any]
    ) -> dict[str, Any]:
        part = file_part(params, kind)
        data = part.file.read()
        if not data:
            raise bad("file must be non-empty")
        caption, entities = caption_of(params)
        voice = None
        if kind == "photo":
            check_photo(data)
        elif len(data) > DOCUMENT_BYTES:
            raise ApiError(413, "Request Entity Too Large")
        if kind == "voice":
            voice = voice_of(data, duration_of(params))
            if voice is not None and chat.id in self.voice_forbidden:
                raise bad("VOICE_MESSAGES_FORBIDDEN")
            kind = "voice" if voice is not None else "document"
        reply = self.fake.json_param(params, "reply_parameters") or {}
        self._check_reply(chat, reply)
        upload = Upload(kind, part.filename, data, part.content_type)
        message = self.fake.post(chat, caption, entities, None, thread, reply.get("message_id"))
        message.upload = upload
        wire = self.fake.wire(chat, message)
        del wire["text"]
        if caption:
            wire["caption"] = caption
        if "entities" in wire:
            wire["caption_entities"] = wire.pop("entities")
        wire[kind] = self._described(upload, voice)
        return wire

    def _check_reply(self, chat: TgChat, reply: dict[str, Any]) -> None:
        wanted = reply.get("message_id")
        if wanted is None or reply.get("allow_sending_without_reply"):
            return
        known = {m.message_id for m in self.fake.sent.get(chat.id, [])}
        if wanted not in known | self.fake.user_message_ids.get(chat.id, set()):
            raise bad("message to be replied not found")

    def _described(self, upload: Upload, voice: Voice | None = None) -> Any:
        """The message's `photo` (its sizes), `voice` or `document`, as Telegram describes
        them."""
        shelf = self.fake.shelf
        if upload.kind == "photo":
            return shelf.photo_sizes(upload.data)
        if voice is not None:
            return shelf.recording("voice", upload.data, voice.duration, voice.mime_type)
        return shelf.document(upload.data, upload.name, upload.content_type)
