"""A message posted to the API (`POST /api/sessions/{id}/messages`): its text, its files, or
both, read and checked before anything is queued.

    {"text": "What's wrong here?",
     "attachments": [{"name": "shot.png", "media_type": "image/png", "data": "<base64>"}]}

A file's `media_type` is the client's word and is not trusted: what a file is comes from its
bytes (`bot.files.intake`). This route alone takes a body as large as a message's files may
be (`PARLEY_MAX_TURN_MB`, in base64, and the text); the others keep the API's 64 KiB. A body
that large is parsed, and its files decoded, in a thread: megabytes of JSON would otherwise
hold the web process's event loop, and every stream it relays, for tens of milliseconds.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import Sequence

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, model_validator

from adapters.web.input import parse_json, refusal, validated
from bot.files.intake import Arrived, Intake, Limits, Refused, TooLarge
from bot.vocabulary.envelope import MAX_ATTACHMENTS, MAX_TEXT
from bot.vocabulary.files import FileRef

IN_THREAD = 256 * 1024  # bytes of body from which it is parsed off the event loop
ROOM = 64 * 1024  # the JSON around the files and the text


class _TooLarge(web.HTTPClientError):
    """A 413 with the API's JSON body (aiohttp's own wants the sizes it compared)."""

    status_code = 413


class AttachmentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="", max_length=255)
    media_type: str | None = Field(default=None, max_length=100)  # not trusted, see above
    data: str = Field(min_length=1)  # standard base64


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(default="", max_length=MAX_TEXT)
    attachments: list[AttachmentIn] = Field(default_factory=list, max_length=MAX_ATTACHMENTS)

    @model_validator(mode="after")
    def _says_something(self) -> MessageIn:
        if not self.text.strip() and not self.attachments:
            empty = "a message needs a text or a file"
            raise ValueError("the text is only whitespace" if self.text else empty)
        return self


def body_limit(limits: Limits) -> int:
    """The largest body a message with its files may come in."""
    return (limits.turn_bytes + 2) // 3 * 4 + MAX_TEXT * 4 + ROOM


async def read_message(request: web.Request, limits: Limits) -> MessageIn:
    """The posted message, or a 413, 400 or 422 that says what to fix."""
    most = body_limit(limits)
    try:
        raw = await request.clone(client_max_size=most).read()
    except web.HTTPRequestEntityTooLarge:
        raise refusal(
            _TooLarge,
            f"the body is larger than {most} bytes: a message's files may come to "
            f"{limits.turn_bytes // (1024 * 1024)} MB",
        ) from None
    data = await asyncio.to_thread(parse_json, raw) if len(raw) > IN_THREAD else parse_json(raw)
    return validated(data, MessageIn)


async def stored(attachments: Sequence[AttachmentIn], intake: Intake) -> list[FileRef]:
    """The message's files checked and in the file store, or a 413 or 422 naming the file."""
    if not attachments:
        return []
    try:
        intake.check_sizes([(a.name, len(a.data) * 3 // 4) for a in attachments])
        arrived = await asyncio.to_thread(_decoded, attachments)
        return await intake.accept(arrived)
    except TooLarge as exc:
        raise refusal(_TooLarge, str(exc)) from None
    except Refused as exc:
        problem = f"attachments: {exc}"
        raise refusal(web.HTTPUnprocessableEntity, "invalid request", problems=[problem]) from None


def _decoded(attachments: Sequence[AttachmentIn]) -> list[Arrived]:
    arrived = []
    for i, attachment in enumerate(attachments):
        try:
            data = base64.b64decode(attachment.data, validate=True)
        except (binascii.Error, ValueError):
            name = attachment.name or "unnamed"
            raise Refused(f"file {i + 1} ({name}) is not valid base64") from None
        arrived.append(Arrived(data, attachment.name))
    return arrived
