"""OpenAI's `POST /v1/audio/speech` (text to speech), as the fake serves it.

The request is a JSON object with `model`, `input` (1 to 4096 characters) and `voice` (one of
OpenAI's built-in voices), and optionally `response_format`, `speed` (0.25 to 4), `instructions`
(at most 4096 characters) and `stream_format` (`audio`; the fake does not stream `sse` events).
An unknown field, a missing one, a wrong type or a value out of its range is a 400 with OpenAI's
error body, recorded in `rejected`.

The answer is real audio in the format asked for, streamed in chunks as OpenAI streams it: a
400 Hz tone of 24 kHz, 16-bit mono, 50 ms for each character of the input at speed 1 (faster
speech is shorter), between 0.5 and 30 seconds, so that a test can decode it and find its
length follows the text. WAV and raw PCM are made here; MP3, Opus (in Ogg), AAC (ADTS) and FLAC
by ffmpeg, in a subprocess the event loop does not wait on, into a file rather than a pipe so
that the muxers that go back to finish their header (FLAC's sample count) can. Encoding takes
a while, so each (format, length) is encoded once and kept for every fake of the process: a
benchmark that times what follows the answer needs the answer at once (`prepare` encodes
ahead). `failing` answers the next requests with error statuses, `answer_format` answers in one
format whatever was asked (a server that ignores `response_format`), `delay` waits before
answering; every request that passed the checks is recorded (`requests`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import math
import tempfile
import uuid
import wave
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.fakes.llm.openai_api import error_response

VOICES = ("alloy", "ash", "ballad", "coral", "echo", "fable", "nova", "onyx", "sage", "shimmer",
          "verse", "marin", "cedar")  # fmt: skip
FORMATS = ("mp3", "opus", "aac", "flac", "wav", "pcm")
CONTENT_TYPES = {"mp3": "audio/mpeg", "opus": "audio/ogg", "aac": "audio/aac",
                 "flac": "audio/flac", "wav": "audio/wav", "pcm": "audio/pcm"}  # fmt: skip
REQUIRED = ("model", "input", "voice")
FIELDS = {*REQUIRED, "response_format", "speed", "instructions", "stream_format"}
MOST_CHARACTERS = 4096  # of the input, and of the instructions
SLOWEST, FASTEST = 0.25, 4.0
RATE = 24_000  # samples a second, as OpenAI's PCM
PERIOD = 60  # samples of one wave: 400 Hz at 24 kHz
MS_PER_CHARACTER = 50
SHORTEST_MS, LONGEST_MS = 500, 30_000
CHUNK = 16 * 1024
ENCODERS: dict[str, tuple[str, ...]] = {
    "mp3": ("-c:a", "libmp3lame", "-b:a", "64k", "-f", "mp3"),
    "opus": ("-c:a", "libopus", "-b:a", "32k", "-f", "ogg"),
    "aac": ("-c:a", "aac", "-b:a", "64k", "-f", "adts"),
    "flac": ("-c:a", "flac", "-f", "flac"),
}
# The error OpenAI answers with each status: type, code, message.
FAILURES: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: ("invalid_request_error", "unsupported_country_region_territory",
          "Country, region, or territory not supported"),
    404: ("invalid_request_error", "model_not_found",
          "The model does not exist or you do not have access to it."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests. Try again soon."),
    500: ("server_error", None, "The server had an error while processing your request."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}  # fmt: skip
# Encoded answers by (format, milliseconds): the same shape is the same bytes in every fake.
ENCODED: dict[tuple[str, int], bytes] = {}


def milliseconds(text: str, speed: float = 1.0) -> int:
    """How long the fake's speech of `text` at `speed` lasts."""
    spoken = round(MS_PER_CHARACTER * len(text) / speed)
    return min(LONGEST_MS, max(SHORTEST_MS, spoken))


@dataclass(frozen=True)
class Said:
    """One request the endpoint took, its JSON body as sent."""

    body: dict[str, Any]

    @property
    def text(self) -> str:
        return str(self.body["input"])

    @property
    def voice(self) -> str:
        return str(self.body["voice"])

    @property
    def response_format(self) -> str:
        return str(self.body.get("response_format") or "mp3")

    @property
    def milliseconds(self) -> int:
        return milliseconds(self.text, float(self.body.get("speed") or 1.0))


@dataclass
class Speech:
    requests: list[Said] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # why each 400 was answered
    failing: list[int] = field(default_factory=list)  # statuses for the next requests
    answer_format: str | None = None  # answer in this format, whatever was asked
    delay: float = 0.0  # seconds to wait before answering a request that passed the checks
    _encoding: dict[tuple[str, int], asyncio.Task[bytes]] = field(default_factory=dict, repr=False)

    async def prepare(
        self, formats: Iterable[str] = FORMATS, lengths_ms: Iterable[int] = (SHORTEST_MS,)
    ) -> None:
        """Encode these shapes now, so that requests for them are answered at once."""
        lengths = list(lengths_ms)
        await asyncio.gather(*(self.audio(kind, ms) for kind in formats for ms in lengths))

    async def audio(self, kind: str, ms: int) -> bytes:
        """The answer of `ms` milliseconds in format `kind`: encoded once, then kept."""
        if kind not in FORMATS:
            raise ValueError(f"no such speech format: {kind!r}")
        key = (kind, ms)
        if key in ENCODED:
            return ENCODED[key]
        task = self._encoding.get(key)
        if task is None:  # one encoding for the requests that ask for it meanwhile
            task = self._encoding[key] = asyncio.ensure_future(encode(kind, ms))
        try:
            data = await asyncio.shield(task)
        finally:
            if task.done():
                self._encoding.pop(key, None)
        ENCODED[key] = data
        return data

    async def handle(self, request: web.Request) -> web.StreamResponse:
        try:
            body = json.loads(await request.read())
        except ValueError:
            return self._bad("We could not parse the JSON body of your request.")
        if not isinstance(body, dict):
            return self._bad("The request body must be a JSON object.")
        problem = _problem(body)
        if problem is not None:
            return self._bad(problem)
        said = Said(body)
        self.requests.append(said)
        status = self.failing.pop(0) if self.failing else None
        if self.delay:
            await asyncio.sleep(self.delay)
        if status is not None:
            kind, code, message = FAILURES.get(status, FAILURES[500 if status >= 500 else 400])
            return error_response(status, kind, message, code=code)
        answered = self.answer_format or said.response_format
        return await _stream(request, answered, await self.audio(answered, said.milliseconds))

    def _bad(self, message: str) -> web.Response:
        self.rejected.append(message)
        return error_response(400, "invalid_request_error", message)


def kind_of(data: bytes) -> str:
    """Which of OpenAI's formats `data` is, by its first bytes; `pcm` when none (raw samples
    have no signature)."""
    if data.startswith(b"OggS") and b"OpusHead" in data[:80]:
        return "opus"
    if data.startswith(b"RIFF") and data[8:12] == b"WAVE":
        return "wav"
    if data.startswith(b"fLaC"):
        return "flac"
    if data.startswith(b"ID3"):
        return "mp3"
    if len(data) > 1 and data[0] == 0xFF and data[1] & 0xF6 == 0xF0:  # 12 sync bits, layer 0
        return "aac"
    if len(data) > 1 and data[0] == 0xFF and data[1] & 0xE6 == 0xE2:  # 11 bits, layer III
        return "mp3"
    return "pcm"


# --- the checks ------------------------------------------------------------------------------


def _problem(body: dict[str, Any]) -> str | None:
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        return f"Unrecognized request argument supplied: {unknown[0]}"
    for name in REQUIRED:
        if name not in body:
            return f"Missing required parameter: '{name}'."
    if not isinstance(body["model"], str):
        return _wrong_type("model", body["model"], "a string")
    if not body["model"]:
        return "you must provide a model parameter"
    return (
        _text_problem("input", body["input"])
        or _voice_problem(body["voice"])
        or _choice_problem("response_format", body.get("response_format"), FORMATS)
        or _speed_problem(body.get("speed"))
        or (_text_problem("instructions", body["instructions"], shortest=0)
            if body.get("instructions") is not None else None)
        or _stream_problem(body.get("stream_format"))
    )  # fmt: skip


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _wrong_type(name: str, value: Any, wanted: str) -> str:
    return f"Invalid type for '{name}': expected {wanted}, but got {_json_type(value)} instead."


def _text_problem(name: str, value: Any, shortest: int = 1) -> str | None:
    if not isinstance(value, str):
        return _wrong_type(name, value, "a string")
    if len(value) < shortest:
        return (
            f"Invalid '{name}': string too short. Expected a string with minimum length "
            f"{shortest}, but got an empty string instead."
        )
    if len(value) > MOST_CHARACTERS:
        return (
            f"Invalid '{name}': string too long. Expected a string with maximum length "
            f"{MOST_CHARACTERS}, but got a string with length {len(value)} instead."
        )
    return None


def _voice_problem(voice: Any) -> str | None:
    if isinstance(voice, dict):
        return "Invalid 'voice': the fake has no custom voices; use one of the built-in voices."
    if not isinstance(voice, str):
        return _wrong_type("voice", voice, "a string")
    return _choice_problem("voice", voice, VOICES)


def _choice_problem(name: str, value: Any, choices: tuple[str, ...]) -> str | None:
    if value is None or value in choices:  # null is an optional field left out
        return None
    if not isinstance(value, str):
        return _wrong_type(name, value, "a string")
    listed = ", ".join(f"'{choice}'" for choice in choices[:-1])
    return (
        f"Invalid value for '{name}': '{value}'. Supported values are: {listed}, "
        f"and '{choices[-1]}'."
    )


def _speed_problem(speed: Any) -> str | None:
    if speed is None:
        return None
    if not isinstance(speed, int | float) or isinstance(speed, bool):
        return _wrong_type("speed", speed, "a decimal")
    if speed < SLOWEST:
        return (
            "Invalid 'speed': decimal below minimum value. Expected a value >= 0.25, "
            f"but got {speed} instead."
        )
    if not speed <= FASTEST:  # NaN too
        return (
            "Invalid 'speed': decimal above maximum value. Expected a value <= 4.0, "
            f"but got {speed} instead."
        )
    return None


def _stream_problem(stream_format: Any) -> str | None:
    if stream_format == "sse":
        return "stream_format 'sse': the fake does not stream speech events; ask for 'audio'."
    return _choice_problem("stream_format", stream_format, ("sse", "audio"))


# --- the sound -------------------------------------------------------------------------------


def tone(ms: int) -> bytes:
    """`ms` milliseconds of a 400 Hz sine, raw 24 kHz 16-bit little-endian mono samples."""
    wave_ = b"".join(
        round(8000 * math.sin(2 * math.pi * i / PERIOD)).to_bytes(2, "little", signed=True)
        for i in range(PERIOD)
    )
    samples = RATE * ms // 1000
    return (wave_ * (samples // PERIOD + 1))[: samples * 2]


def as_wav(pcm: bytes) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as written:
        written.setnchannels(1)
        written.setsampwidth(2)
        written.setframerate(RATE)
        written.writeframes(pcm)
    return out.getvalue()


async def encode(kind: str, ms: int) -> bytes:
    """The tone of `ms` milliseconds in format `kind` (ffmpeg's work for the compressed ones)."""
    pcm = tone(ms)
    if kind == "pcm":
        return pcm
    if kind == "wav":
        return as_wav(pcm)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / f"speech.{kind}"
        process = await asyncio.create_subprocess_exec(
            "ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "wav", "-i",
            "pipe:0", *ENCODERS[kind], str(out),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, errors = await process.communicate(as_wav(pcm))
        if process.returncode != 0:
            raise RuntimeError(f"ffmpeg could not make {kind}: {errors.decode(errors='replace')}")
        return out.read_bytes()


async def _stream(request: web.Request, kind: str, data: bytes) -> web.StreamResponse:
    response = web.StreamResponse(
        headers={"Content-Type": CONTENT_TYPES[kind], "x-request-id": "req_" + uuid.uuid4().hex}
    )
    response.enable_chunked_encoding()
    await response.prepare(request)
    with contextlib.suppress(ConnectionResetError):  # the client stopped reading
        for start in range(0, len(data), CHUNK):
            await response.write(data[start : start + CHUNK])
        await response.write_eof()
    return response
