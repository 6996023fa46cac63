"""OpenAI's `POST /v1/audio/transcriptions`, as the fake serves it.

The request is `multipart/form-data`: a `file` part with a filename, a `model` field, and
optionally `language`, `prompt`, `response_format` and `temperature`; anything else, a file
whose name's extension is not one OpenAI lists, or bytes that are not the sound that extension
names, is a 400 with OpenAI's error body. The transcript is what the test scripted for the
sound's SHA-256 (`script`), else one derived from it (`default`); `failing` answers the next
requests with an error status first. Every request that reached the endpoint is recorded.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from aiohttp import BodyPartReader, web

from tests.fakes.llm.openai_api import error_response

FORMATS = ("flac", "m4a", "mp3", "mp4", "mpeg", "mpga", "oga", "ogg", "wav", "webm")
RESPONSE_FORMATS = ("json", "text", "srt", "verbose_json", "vtt")
FIELDS = {"model", "language", "prompt", "response_format", "temperature"}
MAX_BYTES = 25 * 1024 * 1024
# What each extension's bytes start with (MP3: an ID3 tag or a frame's sync bits).
MAGIC: dict[str, tuple[bytes, ...]] = {
    "flac": (b"fLaC",),
    "ogg": (b"OggS",),
    "oga": (b"OggS",),
    "wav": (b"RIFF",),
    "webm": (b"\x1aE\xdf\xa3",),
    "mp3": (b"ID3", b"\xff\xfb", b"\xff\xf3", b"\xff\xf2", b"\xff\xe3"),
}


@dataclass(frozen=True)
class Heard:
    """One request the endpoint took: the sound, its name and the form's fields."""

    filename: str
    data: bytes
    fields: dict[str, str]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass
class Transcriptions:
    requests: list[Heard] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # why each 400 was answered
    scripted: dict[str, str] = field(default_factory=dict)  # SHA-256 of the sound → text
    failing: list[int] = field(default_factory=list)  # statuses for the next requests

    def script(self, data: bytes, text: str) -> None:
        """Answer `text` for a sound whose bytes are `data`, as sent."""
        self.scripted[hashlib.sha256(data).hexdigest()] = text

    def answer_any(self, text: str) -> None:
        """Answer `text` for whatever sound comes (one that Parley converted first)."""
        self.scripted["*"] = text

    @staticmethod
    def default(sha256: str) -> str:
        return f"Heard sound {sha256[:8]}."

    async def handle(self, request: web.Request) -> web.Response:
        if request.content_type != "multipart/form-data":
            return self._bad("Invalid Content-Type header: the request must be multipart/form-data")
        read = await _form(request)
        if isinstance(read, str):
            return self._bad(read)
        heard = read
        problem = _problem(heard)
        if problem is not None:
            return self._bad(problem)
        self.requests.append(heard)
        if self.failing:
            status = self.failing.pop(0)
            return error_response(status, "server_error", "The server had an error")
        text = self.scripted.get(heard.sha256) or self.scripted.get("*")
        return _answer(text or self.default(heard.sha256), heard.fields)

    def _bad(self, message: str) -> web.Response:
        self.rejected.append(message)
        return error_response(400, "invalid_request_error", message)


async def _form(request: web.Request) -> Heard | str:
    fields: dict[str, str] = {}
    file: tuple[str, bytes] | None = None
    reader = await request.multipart()
    while (part := await reader.next()) is not None:
        if not isinstance(part, BodyPartReader):
            return "nested multipart bodies are not supported"
        if part.name == "file":
            if not part.filename:
                return "file: a file part needs a filename"
            file = (part.filename, await part.read())
        elif part.name in FIELDS:
            fields[part.name] = (await part.read()).decode()
        else:
            return f"Unrecognized request argument supplied: {part.name}"
    if file is None:
        return "you must provide a file"
    if not fields.get("model"):
        return "you must provide a model parameter"
    return Heard(file[0], file[1], fields)


def _problem(heard: Heard) -> str | None:
    extension = heard.filename.rsplit(".", 1)[-1].lower() if "." in heard.filename else ""
    if extension not in FORMATS:
        return f"Invalid file format. Supported formats: {list(FORMATS)}"
    if not heard.data or len(heard.data) > MAX_BYTES:
        return "The audio file is empty or larger than 25 MB."
    if not _decodable(heard.data, extension):
        return "The audio file could not be decoded or its format is not supported."
    kind = heard.fields.get("response_format", "json")
    if kind not in RESPONSE_FORMATS:
        return f"response_format: must be one of {list(RESPONSE_FORMATS)}"
    return None


def _decodable(data: bytes, extension: str) -> bool:
    if extension in ("mp4", "m4a"):
        return data[4:8] == b"ftyp"
    if extension == "wav":
        return data.startswith(b"RIFF") and data[8:12] == b"WAVE"
    magic = MAGIC.get(extension, MAGIC["mp3"])  # mpeg and mpga are MP3
    return data.startswith(magic)


def _answer(text: str, fields: dict[str, str]) -> web.Response:
    kind = fields.get("response_format", "json")
    if kind == "text":
        return web.Response(text=text + "\n", content_type="text/plain")
    if kind == "json":
        return web.json_response({"text": text, "usage": {"type": "duration", "seconds": 1}})
    if kind == "verbose_json":
        body = {"task": "transcribe", "language": "english", "duration": 1.0, "text": text,
                "segments": []}  # fmt: skip
        return web.Response(text=json.dumps(body), content_type="application/json")
    return web.Response(
        text=f"1\n00:00:00,000 --> 00:00:01,000\n{text}\n", content_type="text/plain"
    )
