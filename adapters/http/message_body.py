"""A message posted to the API as JSON, read into its text and its files' bytes:

    {"text": "What's wrong here?",
     "attachments": [{"name": "shot.png", "media_type": "image/png", "data": "<base64>"}]}

Parsing megabytes of JSON and decoding megabytes of base64 hold the interpreter's lock for
hundreds of milliseconds, a thread or not: every stream the web process relays, and its
`/healthz`, would wait. So a body past `IN_PROCESS` bytes is read by a child process of its
own (`python -m adapters.http.message_body`, with the reader's memory and CPU bounds), to
which the web process streams the body as it arrives, never holding it whole, and from which
it takes the files' bytes back; a small body is read in place, the same way (`decode`).

What comes back is plain: one line of JSON (the text and each file's name and length, or the
problem: 400 for JSON that is not, 413 for files past the message's sizes, 422 for the rest),
then the files' bytes one after another.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from adapters.web.json_text import MAX_DEPTH, NOT_JSON, nesting, problems
from bot.files.reader import limit_process
from bot.files.reading import Limits, Refused, TooLarge, check_sizes
from bot.vocabulary.envelope import MAX_ATTACHMENTS, MAX_TEXT

IN_PROCESS = 256 * 1024  # bytes of body from which it is read by a child process


class AttachmentIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="", max_length=255)
    media_type: str | None = Field(default=None, max_length=100)  # not trusted: see messages
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


@dataclass(frozen=True)
class Decoded:
    """The message's text and its files (name, bytes), or why it is refused: `status` (400,
    413 or 422), the error and the problems the API's JSON answer carries."""

    text: str = ""
    files: list[tuple[str, bytes]] = field(default_factory=list)
    status: int = 0
    error: str = ""
    problems: list[str] = field(default_factory=list)


def decode(raw: bytes, limits: Limits) -> Decoded:
    """The posted body read: parsed, validated, its files' sizes checked and decoded."""
    depth = nesting(raw)
    if depth is not None and depth > MAX_DEPTH:
        return Decoded(status=400, error=f"the body nests deeper than {MAX_DEPTH} levels")
    try:
        if depth is None:
            raise ValueError("unclosed string")
        message = MessageIn.model_validate(json.loads(raw))
    except ValidationError as exc:
        return Decoded(status=422, error="invalid request", problems=problems(exc))
    except ValueError:
        return Decoded(status=400, error=NOT_JSON.format(what="the body"))
    try:
        check_sizes(limits, [(a.name, len(a.data) * 3 // 4) for a in message.attachments])
        return Decoded(message.text, _decoded(message.attachments))
    except TooLarge as exc:
        return Decoded(status=413, error=str(exc))
    except Refused as exc:
        return Decoded(status=422, error="invalid request", problems=[f"attachments: {exc}"])


def _decoded(attachments: list[AttachmentIn]) -> list[tuple[str, bytes]]:
    files = []
    for i, attachment in enumerate(attachments):
        try:
            files.append((attachment.name, base64.b64decode(attachment.data, validate=True)))
        except (binascii.Error, ValueError):
            name = attachment.name or "unnamed"
            raise Refused(f"file {i + 1} ({name}) is not valid base64") from None
    return files


def head(decoded: Decoded) -> dict[str, Any]:
    """The answer's first line: all of `decoded` but the files' bytes."""
    if decoded.status:
        return {"status": decoded.status, "error": decoded.error, "problems": decoded.problems}
    return {"text": decoded.text, "files": [[name, len(data)] for name, data in decoded.files]}


def main() -> None:
    """The child process: the job's line (the limits), then the body, on stdin."""
    stdin, out = sys.stdin.buffer, sys.stdout.buffer
    job = json.loads(stdin.readline(64 * 1024))
    limit_process(int(job["memory_mb"]), float(job["seconds"]))
    decoded = decode(stdin.read(), Limits(**job["limits"]))
    out.write(json.dumps(head(decoded)).encode() + b"\n")
    for _, data in decoded.files:
        out.write(data)
    out.flush()


if __name__ == "__main__":
    main()
