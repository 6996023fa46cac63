"""Small real recordings for tests, made by ffmpeg from its own test sources: a sine tone as
a Telegram voice note (Opus in Ogg), as MP3, AAC and WAV, and a video note (H.264 and AAC in
MP4, as Telegram's clients record them), with or without sound."""

from __future__ import annotations

import functools
import subprocess
import tempfile
from pathlib import Path

from tests.fakes.llm import OPENAI_KEY, FakeLLM

TONE = "sine=frequency={hz}:sample_rate=48000:duration={seconds}"
PICTURE = "testsrc=size=240x240:rate=10:duration={seconds}"


def _ffmpeg(*args: str, suffix: str) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / f"out{suffix}"
        command = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", *args, str(out)]
        subprocess.run(command, check=True, timeout=60)
        return out.read_bytes()


@functools.cache
def tone(kind: str = "ogg", seconds: float = 1.0, hz: int = 440) -> bytes:
    """A sine tone: `ogg` (Opus, a voice note), `mp3`, `aac` (ADTS), `webm` (Opus, as a
    browser records it) or `wav`."""
    codec = {"ogg": ["-c:a", "libopus"], "mp3": ["-c:a", "libmp3lame"], "aac": ["-c:a", "aac"],
             "webm": ["-c:a", "libopus"], "wav": []}[kind]  # fmt: skip
    source = TONE.format(hz=hz, seconds=seconds)
    return _ffmpeg("-f", "lavfi", "-i", source, *codec, suffix=f".{kind}")


@functools.cache
def video_note(seconds: float = 1.0, *, sound: bool = True, hz: int = 660) -> bytes:
    """A square MP4 video note: H.264 picture and, with `sound`, an AAC tone."""
    picture = ["-f", "lavfi", "-i", PICTURE.format(seconds=seconds)]
    tone_in = ["-f", "lavfi", "-i", TONE.format(hz=hz, seconds=seconds)] if sound else []
    codecs = ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"]
    return _ffmpeg(*picture, *tone_in, *codecs, "-movflags", "+faststart", suffix=".mp4")


def voice_env(fake: FakeLLM, model: str = "whisper-1") -> dict[str, str]:
    """The settings that send voice notes to the fake's transcription endpoint."""
    return {
        "PARLEY_TRANSCRIBE_MODEL": model,
        "PARLEY_TRANSCRIBE_BASE_URL": fake.openai_base_url,
        "PARLEY_TRANSCRIBE_API_KEY": OPENAI_KEY,
    }


def speech_env(fake: FakeLLM, model: str = "gpt-4o-mini-tts") -> dict[str, str]:
    """The settings that say replies aloud at the fake's speech endpoint (each person still
    chooses, with `/voice`, unless `PARLEY_VOICE_REPLIES` is added)."""
    return {
        "PARLEY_SPEECH_MODEL": model,
        "PARLEY_SPEECH_BASE_URL": fake.openai_base_url,
        "PARLEY_SPEECH_API_KEY": OPENAI_KEY,
    }


@functools.cache
def live_webm(seconds: float = 1.0, hz: int = 440) -> bytes:
    """Opus in WebM as a browser streams it: written to a pipe, so it says no length."""
    source = TONE.format(hz=hz, seconds=seconds)
    command = ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi",
               "-i", source, "-c:a", "libopus", "-f", "webm", "pipe:1"]  # fmt: skip
    return subprocess.run(command, check=True, timeout=60, capture_output=True).stdout
