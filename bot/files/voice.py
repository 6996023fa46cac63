"""Voice notes to text, through an OpenAI-compatible `/audio/transcriptions` endpoint
(OpenAI's, Groq's, a local faster-whisper server), named by PARLEY_TRANSCRIBE_MODEL and
PARLEY_TRANSCRIBE_BASE_URL.

A voice note is sniffed from its bytes and converted only where the endpoint needs it
(`bot.files.audio`), at most `BUSY` at once per process, since ffmpeg takes a core, and at
most `CALLS` are at the endpoint at once, however many people talk at a time. The call
is the `openai` SDK's, which times out each attempt (PARLEY_TRANSCRIBE_TIMEOUT) and tries a
passing failure (a 429, a 5xx, a dropped connection) twice more with its backoff. Whatever
fails is one sentence for the person (`FAILED`) and one log line for the operator that names
the kind of failure and never the key, which an endpoint's error message may quote.

The latest transcripts (`KEPT`) are kept in memory by their voice note's SHA-256, so a note a
platform delivers again (or a person sends twice) is not sent to the endpoint twice; never on
disk, where what people said would outlive the sessions they said it in (the record keeps
each transcript with its message, and goes with it).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.config.settings import Settings
from bot.files import audio, ffmpeg

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)

NO_BACKEND = "Voice notes aren't set up here — please type your message."
FAILED = "I couldn't transcribe that voice note, please try again or type it."
SILENT = "I couldn't hear any words in that voice note, please try again or type it."
KEPT = 256  # transcripts kept in memory, by their recording's hash, the latest
# What the model reads above a transcript: the person's words, heard rather than typed.
MARK = "[Transcript of the person's voice note]"
BUSY = 2  # voice notes converted at once in one process
CALLS = 8  # voice notes at the endpoint at once from one process
RETRIES = 2  # the SDK's tries after the first, for a passing failure
# Named, not left to the SDK, which would read OPENAI_BASE_URL: the chat model's server.
OPENAI = "https://api.openai.com/v1"


class NotHeard(ValueError):
    """A voice note that gave no transcript; the text is for the person who sent it."""


@dataclass(frozen=True)
class Endpoint:
    """Where voice notes are sent and how long they may be."""

    model: str
    base_url: str
    api_key: str
    timeout: float
    max_seconds: int

    @classmethod
    def of(cls, settings: Settings) -> Endpoint | None:
        """The endpoint the settings name, or None when voice notes are not transcribed."""
        if settings.transcribe_model is None:
            return None
        key = settings.transcription_key
        return cls(
            model=settings.transcribe_model,
            base_url=settings.transcribe_base_url or OPENAI,
            api_key=key.get_secret_value() if key else "unused",  # a local server needs none
            timeout=settings.transcribe_timeout,
            max_seconds=settings.transcribe_max_seconds,
        )

    def __repr__(self) -> str:  # never the key
        return f"Endpoint(model={self.model!r}, base_url={self.base_url!r})"


class Transcriber:
    def __init__(self, endpoint: Endpoint) -> None:
        from openai import AsyncOpenAI  # noqa: PLC0415 (only where voice notes are heard)

        self.endpoint = endpoint
        self._heard: OrderedDict[str, str] = OrderedDict()
        self._busy = asyncio.Semaphore(BUSY)
        self._calls = asyncio.Semaphore(CALLS)
        self._client: AsyncOpenAI = AsyncOpenAI(
            api_key=endpoint.api_key,
            base_url=endpoint.base_url,
            timeout=endpoint.timeout,
            max_retries=RETRIES,
        )

    def check_length(self, seconds: Sequence[float]) -> None:
        """NotHeard when a platform says a recording lasts longer than is transcribed."""
        most = self.endpoint.max_seconds
        longest = max(seconds, default=0)
        if longest > most:
            raise NotHeard(f"That recording {audio.too_long(longest, most)}.")

    async def transcript(self, data: bytes, sound: audio.Sound) -> str:
        """What is said in `data`; NotHeard, saying why in a sentence, when it cannot be had."""
        sha256 = await asyncio.to_thread(lambda: hashlib.sha256(data).hexdigest())
        if (kept := self._heard.get(sha256)) is not None:
            self._heard.move_to_end(sha256)
            return kept
        async with self._busy:
            upload = await self._upload(data, sound)
        async with self._calls:
            text = await self._call(upload)
        if not text:
            raise NotHeard(SILENT)
        self._heard[sha256] = text
        if len(self._heard) > KEPT:
            self._heard.popitem(last=False)
        return text

    async def _upload(self, data: bytes, sound: audio.Sound) -> audio.Upload:
        try:
            return await audio.upload(data, sound, self.endpoint.max_seconds)
        except audio.NotSound as exc:
            raise NotHeard(f"That recording {exc}.") from None
        except ffmpeg.Missing:
            log.error("voice note not converted: ffmpeg is not installed (apt-get install ffmpeg)")
            raise NotHeard(FAILED) from None
        except ffmpeg.Failed as exc:
            log.warning("voice note (%s) not converted: %s", sound.media_type, exc)
            raise NotHeard(FAILED) from None

    async def _call(self, upload: audio.Upload) -> str:
        import openai  # noqa: PLC0415 (imported by __init__ already)

        try:
            result = await self._client.audio.transcriptions.create(
                file=(upload.name, upload.data, upload.media_type),
                model=self.endpoint.model,
                response_format="json",
            )
        except openai.APIStatusError as exc:  # its message may quote the key: not logged
            log.warning("transcription refused: %s %s", exc.status_code, type(exc).__name__)
            raise NotHeard(FAILED) from None
        except openai.APIError as exc:
            log.warning("transcription failed: %s", type(exc).__name__)
            raise NotHeard(FAILED) from None
        return result.text.strip()

    async def aclose(self) -> None:
        await self._client.close()


def with_transcripts(text: str, said: Sequence[str]) -> str:
    """A message's text as the model reads it: what was typed (a caption), then each
    transcript under `MARK`."""
    parts = [text] if text else []
    parts += [f"{MARK}\n{words}" for words in said]
    return "\n\n".join(parts)


def typed(text: str) -> str:
    """What was typed of a message's text as `with_transcripts` made it: its caption, the
    text before the first transcript."""
    return text.partition(MARK)[0].strip()


def transcriber(settings: Settings) -> Transcriber | None:
    """The transcriber the settings ask for, or None."""
    endpoint = Endpoint.of(settings)
    return None if endpoint is None else Transcriber(endpoint)
