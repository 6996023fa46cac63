"""Text said aloud by an OpenAI-compatible `/audio/speech` endpoint (OpenAI's, or a local
server's), made a voice note: Opus in Ogg, the one format every platform plays as one.

The endpoint is asked for Opus; one that answers it is taken as it is, its length read from
its last page. A server that answers another format anyway (many local ones make only MP3 or
WAV) has its sound converted by ffmpeg, bounded as every ffmpeg run is (`bot.files.ffmpeg`),
and at most `BUSY` at once in a process, since ffmpeg takes a core. What the endpoint sends is
read as it streams in and refused past `MAX_ANSWER` bytes, before the SDK could hold it all;
bytes that are no sound ffmpeg reads are refused too.

The SDK is the `openai` package's, imported with the first `Speaker` (a deployment that says
nothing aloud never imports it), which tries a passing failure (a 429, a 5xx, a dropped
connection) once more with its backoff. Whatever fails is `NotSaid`, one sentence for the log
that names the kind of failure and never the key, which an endpoint's message may quote.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from pydantic import SecretStr

from bot.config.settings import Settings
from bot.files import audio, ffmpeg

log = logging.getLogger(__name__)

# Named, not left to the SDK, which would read OPENAI_BASE_URL: the chat model's server.
OPENAI = "https://api.openai.com/v1"
RETRIES = 1  # the SDK's tries after the first, for a passing failure
BUSY = 2  # answers converted at once in one process
MAX_ANSWER = 32 * 1024 * 1024  # bytes: ~10 min of 24 kHz WAV, far past 4,096 characters' worth
CONVERT_S = 60.0
MAX_SECONDS = 900  # the longest voice note kept: 4,096 characters said slowly
# Opus at 48 kHz, which every player and Telegram's voice notes take, mono and small.
VOICE_OPUS = ("-map", "0:a:0?", "-vn", "-sn", "-dn", "-ac", "1", "-ar", "48000", "-c:a",
              "libopus", "-b:a", "32k", "-vbr", "constrained", "-application", "voip",
              "-f", "ogg")  # fmt: skip
OPUS_BYTES_PER_S = 5_000  # 32 kb/s and the container's pages


class NotSaid(Exception):
    """The text could not be said; why, in a sentence for the log (never the key)."""


@dataclass(frozen=True)
class SpeechService:
    """The endpoint the operator named (PARLEY_SPEECH_*): its model and voice, its address,
    its key (None: a local server that needs none) and how long one request may take."""

    model: str
    voice: str
    base_url: str
    key: SecretStr | None
    timeout: float

    @classmethod
    def of(cls, settings: Settings) -> SpeechService | None:
        """The service the settings name, or None when nothing is said aloud."""
        if settings.speech_model is None:
            return None
        return cls(
            model=settings.speech_model,
            voice=settings.speech_voice,
            base_url=settings.speech_base_url or OPENAI,
            key=settings.speech_key,
            timeout=settings.speech_timeout,
        )


@dataclass(frozen=True)
class VoiceNote:
    """Opus in Ogg, and how long it lasts."""

    data: bytes
    seconds: float

    def __repr__(self) -> str:  # never the bytes
        return f"VoiceNote({len(self.data)} bytes, {self.seconds:.1f} s)"


class Speaker:
    """Says texts at one endpoint, with one client kept for the process's loop."""

    def __init__(self, service: SpeechService) -> None:
        from openai import AsyncOpenAI  # noqa: PLC0415 (only where replies are said aloud)

        self.service = service
        key = service.key.get_secret_value() if service.key is not None else "unused"
        self._client = AsyncOpenAI(
            api_key=key, base_url=service.base_url, timeout=service.timeout, max_retries=RETRIES
        )
        self._busy = asyncio.Semaphore(BUSY)

    async def said(self, text: str) -> VoiceNote:
        """`text` as a voice note; NotSaid says why there is none."""
        answer = await self._asked(text)
        if answer[:4] == b"OggS" and answer[28:36] == b"OpusHead":
            return VoiceNote(answer, audio.opus_seconds(answer))
        sound = audio.sniff(answer)
        if sound is None:
            raise NotSaid("the speech endpoint's answer is no sound Parley reads")
        async with self._busy:
            return await _converted(answer, sound)

    async def _asked(self, text: str) -> bytes:
        """The endpoint's answer, at most `MAX_ANSWER` bytes of it."""
        import openai  # noqa: PLC0415 (imported by __init__ already)

        service = self.service
        try:
            async with self._client.audio.speech.with_streaming_response.create(
                model=service.model, voice=service.voice, input=text, response_format="opus"
            ) as response:
                answer = bytearray()
                async for chunk in response.iter_bytes():
                    answer += chunk
                    if len(answer) > MAX_ANSWER:
                        raise NotSaid(f"the speech endpoint answered more than {MAX_ANSWER} bytes")
        except openai.APIStatusError as exc:  # its message may quote the key: not logged
            why = f"refused the request: {exc.status_code} {type(exc).__name__}"
            raise NotSaid(f"the speech endpoint {why}") from None
        except openai.APITimeoutError:
            why = f"did not answer within {service.timeout:g} s"
            raise NotSaid(f"the speech endpoint {why}") from None
        except openai.APIError as exc:
            why = f"could not be reached: {type(exc).__name__}"
            raise NotSaid(f"the speech endpoint {why}") from None
        if not answer:
            raise NotSaid("the speech endpoint answered no sound")
        return bytes(answer)

    async def aclose(self) -> None:
        await self._client.close()


async def _converted(answer: bytes, sound: audio.Sound) -> VoiceNote:
    args = [*VOICE_OPUS, "-t", str(MAX_SECONDS), "pipe:1"]
    most = MAX_SECONDS * OPUS_BYTES_PER_S + 64 * 1024
    try:
        made = await ffmpeg.convert(
            answer, f".{sound.extension}", args, seconds=CONVERT_S, most=most
        )
    except ffmpeg.Missing:
        raise NotSaid("ffmpeg is not installed (apt-get install ffmpeg)") from None
    except ffmpeg.Failed as exc:
        why = f"{sound.media_type} was not converted: {exc}"
        raise NotSaid(f"the speech endpoint's {why}") from None
    if not made.data:
        raise NotSaid(f"the speech endpoint's {sound.media_type} has no sound in it")
    return VoiceNote(made.data, audio.opus_seconds(made.data))
