"""A message posted to the API (`POST /api/sessions/{id}/messages`): its text, its files, or
both, read and checked before anything is queued. As JSON:

    {"text": "What's wrong here?",
     "attachments": [{"name": "shot.png", "media_type": "image/png", "data": "<base64>"}]}

or as `multipart/form-data` (`curl -F text=... -F file=@shot.png`): one `text` field and
file parts, each read up to the file cap as it arrives, and all of them up to the message's,
so no body is held past what a message may carry. A body whose `Content-Length` says it is
larger is refused (413) before a byte of it is read, and only a few bodies are held at once
by one process, from their first byte until their files are stored (`Intake.holding`): a
burst of uploads waits in the network's buffers, not in memory.

A file's `media_type` is the client's word and is not trusted: what a file is comes from its
bytes (`bot.files.intake`); a recording (a voice note, an audio file) is transcribed
(`bot.files.voice`) and its transcript becomes part of the message, or a 422 says why not.
This route alone takes a body as large as a message's files may be (`PARLEY_MAX_TURN_MB`, in
base64, and the text); the others keep the API's 64 KiB. A JSON body that large is parsed,
and its files decoded, by a child process it is streamed to (`adapters.http.message_json`):
megabytes of JSON would otherwise hold the web process, and every stream it relays, for
hundreds of milliseconds, a thread or not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aiohttp import BodyPartReader, web
from pydantic import ValidationError

from adapters.http.message_body import MessageIn
from adapters.http.message_json import BodyTooLarge, read_json_message
from adapters.web.input import refusal
from bot.files.intake import Arrived, Intake, Limits, Refused, TooLarge, called, let_go
from bot.vocabulary.envelope import MAX_TEXT
from bot.vocabulary.files import FileRef

CHUNK = 64 * 1024
ROOM = 64 * 1024  # the JSON around the files and the text


class _TooLarge(web.HTTPClientError):
    """A 413 with the API's JSON body (aiohttp's own wants the sizes it compared)."""

    status_code = 413


@dataclass(frozen=True)
class Posted:
    """A posted message once read: its text, its stored files, and what was said in its
    recordings."""

    text: str
    files: list[FileRef]
    said: list[str]


def body_limit(limits: Limits) -> int:
    """The largest body a message with its files may come in."""
    return (limits.turn_bytes + 2) // 3 * 4 + MAX_TEXT * 4 + ROOM


async def posted(request: web.Request, intake: Intake, lane: str) -> Posted:
    """The posted message's text, its files stored (read in `lane`, the conversation's) and
    its recordings heard; or a 400, 413 or 422 that says what to fix, nothing stored.
    The body is read while `intake.holding` room for it: once the conversation's earlier
    message is through, and while few enough are held (`bot.files.intake.HELD`)."""
    _refuse_announced(request, intake.limits)
    async with intake.holding(lane):
        if request.content_type == "multipart/form-data":
            text, arrived = await read_form(request, intake.limits)
        else:
            text, arrived = await _json_message(request, intake)
        heard = None
        try:
            heard = await intake.hear(arrived)
            stored = await intake.accept(heard.files, None) if heard.files else []
            return Posted(text, stored, heard.said)
        except TooLarge as exc:
            raise refusal(_TooLarge, str(exc)) from None
        except Refused as exc:
            raise _unprocessable(f"attachments: {exc}") from None
        finally:
            let_go(arrived, heard)


def _refuse_announced(request: web.Request, limits: Limits) -> None:
    """A 413 for a body that says it is larger than a message may be, before it is read."""
    most = body_limit(limits)
    if request.content_length is not None and request.content_length > most:
        raise refusal(_TooLarge, _too_large(most, limits))


def _too_large(most: int, limits: Limits) -> str:
    return (
        f"the body is larger than {most} bytes: a message's files may come to "
        f"{limits.turn_bytes // (1024 * 1024)} MB"
    )


def _unprocessable(problem: str) -> web.HTTPException:
    return refusal(web.HTTPUnprocessableEntity, "invalid request", problems=[problem])


async def read_form(request: web.Request, limits: Limits) -> tuple[str, list[Arrived]]:
    """A multipart message: its `text` field and its file parts, each bounded as it is read."""
    text, files = None, list[Arrived]()
    left = body_limit(limits)
    try:
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader):
                raise _unprocessable("body: a part may not hold parts of its own")
            if part.filename is None and part.name == "text" and text is None:
                text = await _bounded(part, min(MAX_TEXT * 4, left), "the text is too long")
                left -= len(text)
            elif part.filename is None:
                raise _unprocessable(f"{part.name}: not a field; send one text and files")
            else:
                if len(files) == limits.files:
                    raise refusal(_TooLarge, f"more than {limits.files} files in one message")
                data = await _bounded(part, *_room(part.filename, files, left, limits))
                files.append(Arrived(data, part.filename))
                left -= len(data)
    except (ValueError, AssertionError, RuntimeError):  # what aiohttp's reader raises
        let_go(files)
        raise refusal(web.HTTPBadRequest, "the body is not valid multipart/form-data") from None
    except web.HTTPException:
        let_go(files)
        raise
    text = text or b""
    try:
        message = MessageIn(text=text.decode("utf-8"))
    except UnicodeDecodeError:
        raise _unprocessable("text: not UTF-8") from None
    except ValidationError as exc:
        if files and not text.strip():
            return "", files
        raise _unprocessable(f"text: {exc.errors()[0]['msg']}") from None
    return message.text, files


def _room(name: str, files: Sequence[Arrived], left: int, limits: Limits) -> tuple[int, str]:
    """How much of the next file may be read, and what a 413 says past that: the file's
    own cap, or what is left of the message's."""
    room = min(left, limits.turn_bytes - sum(len(file.data) for file in files))
    if limits.file_bytes <= room:
        return limits.file_bytes, f"{called(name)} is larger than {limits.file_bytes} bytes"
    return max(room, 0), _too_large(body_limit(limits), limits)


async def _bounded(part: BodyPartReader, most: int, too_large: str) -> bytes:
    """The part, read as it comes; a 413 saying `too_large` once it passes `most` bytes."""
    chunks, size = [], 0
    while chunk := await part.read_chunk(CHUNK):
        size += len(chunk)
        if size > most:
            raise refusal(_TooLarge, too_large)
        chunks.append(chunk)
    return b"".join(chunks)


async def _json_message(request: web.Request, intake: Intake) -> tuple[str, list[Arrived]]:
    """A JSON message's text and files (`adapters.http.message_json`), or the 4xx."""
    most = body_limit(intake.limits)
    try:
        decoded = await read_json_message(request, intake.limits, intake.readers.limits, most)
    except BodyTooLarge:
        raise refusal(_TooLarge, _too_large(most, intake.limits)) from None
    if decoded.status == 413:
        raise refusal(_TooLarge, decoded.error)
    if decoded.status:
        kind = web.HTTPBadRequest if decoded.status == 400 else web.HTTPUnprocessableEntity
        if decoded.problems:
            raise refusal(kind, decoded.error, problems=decoded.problems)
        raise refusal(kind, decoded.error)
    return decoded.text, [Arrived(data, name) for name, data in decoded.files]
