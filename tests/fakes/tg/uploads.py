"""Files the bot sends, as the Bot API takes them: `sendPhoto` and `sendDocument` with the file
as a part of a multipart/form-data request, named by the field itself or, as aiogram sends it,
by `attach://<part>`. Checked as Telegram checks them: the chat and topic, a part with a file
name and bytes, a caption of at most 1024 characters in a known parse mode, the message it
replies to; a photo a real image of at most 10 MB whose sides add up to 10,000 px at most
and are at most 20 to 1 (else `PHOTO_INVALID_DIMENSIONS`), a document at most 50 MB (else a
413, as Telegram's front answers a request that large). What was sent is kept, bytes
included, for the tests."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from aiohttp.web_request import FileField
from PIL import Image, UnidentifiedImageError

from tests.fakes.tg.formatting import formatted, utf16
from tests.fakes.tg.model import ApiError, TgChat, Upload, bad

if TYPE_CHECKING:
    from tests.fakes.tg.server import FakeTelegram

MB = 1024 * 1024
PHOTO_BYTES = 10 * MB
DOCUMENT_BYTES = 50 * MB
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


class Uploads:
    """`sendPhoto` and `sendDocument` of the fake (called by `methods.Methods`)."""

    def __init__(self, fake: FakeTelegram) -> None:
        self.fake = fake

    def send(
        self, kind: str, chat: TgChat, thread: int | None, params: dict[str, Any]
    ) -> dict[str, Any]:
        part = file_part(params, kind)
        data = part.file.read()
        if not data:
            raise bad("file must be non-empty")
        caption, entities = caption_of(params)
        if kind == "photo":
            check_photo(data)
        elif len(data) > DOCUMENT_BYTES:
            raise ApiError(413, "Request Entity Too Large")
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
        wire[kind] = self._described(upload)
        return wire

    def _check_reply(self, chat: TgChat, reply: dict[str, Any]) -> None:
        wanted = reply.get("message_id")
        if wanted is None or reply.get("allow_sending_without_reply"):
            return
        known = {m.message_id for m in self.fake.sent.get(chat.id, [])}
        if wanted not in known | self.fake.user_message_ids.get(chat.id, set()):
            raise bad("message to be replied not found")

    def _described(self, upload: Upload) -> Any:
        """The message's `photo` (its sizes) or `document`, as Telegram describes them."""
        shelf = self.fake.shelf
        if upload.kind == "photo":
            return shelf.photo_sizes(upload.data)
        return shelf.document(upload.data, upload.name, upload.content_type)
