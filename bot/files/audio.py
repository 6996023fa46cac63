"""Sound people send (a voice note, an audio file, a video note), made ready for a
transcription endpoint: its kind from its bytes, never its name, and ffmpeg only where needed.

OpenAI's `/audio/transcriptions` (and Groq's, and the faster-whisper servers that copy it)
take flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav and webm, told apart by the upload's name.
What sniffs as Ogg, MP3, FLAC, WAV or an M4A goes as it came, under the name its kind has.
Anything else that sniffs as sound or film (an MP4 or QuickTime video, a video note, WebM or
Matroska, AAC, AMR, AIFF, CAF, WMA) has its first audio track taken out by ffmpeg
(`bot.files.ffmpeg`) as mono 16 kHz Opus in Ogg, which is what a speech model hears anyway:
a minute of a video note becomes about 200 KB instead of megabytes. A recording's length is
checked where it can be had cheaply: a converted one's from ffmpeg, Opus in Ogg and WAV from
their own headers; the platforms say the others' before the download, and any is bounded by
the size of a file.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.files import ffmpeg

# Constrained VBR: plain VBR spends 40 kb/s and more on a pure tone, past `OPUS_BYTES_PER_S`.
# The map is optional (`?`): a file without sound then says "does not contain any stream" in
# every ffmpeg, where a required map's complaint changed wording between versions.
OGG_OPUS = ("-map", "0:a:0?", "-vn", "-sn", "-dn", "-ac", "1", "-ar", "16000", "-c:a", "libopus",
            "-b:a", "24k", "-vbr", "constrained", "-application", "voip", "-f", "ogg")  # fmt: skip
CONVERT_S = 60.0  # ffmpeg's time for one file
# Bytes of Opus at 24 kb/s per second of sound, with room for the container
OPUS_BYTES_PER_S = 4_000


class NotSound(ValueError):
    """Bytes that are no sound Parley can hear; the text is for the person."""


@dataclass(frozen=True)
class Sound:
    """What a file is, from its bytes: its type, and the extension an endpoint reads it by."""

    media_type: str
    extension: str
    taken_as_is: bool


@dataclass(frozen=True)
class Upload:
    """The bytes to send, and the name that says what they are."""

    data: bytes
    name: str
    media_type: str


OGG = Sound("audio/ogg", "ogg", taken_as_is=True)


def sniff(data: bytes) -> Sound | None:
    """The sound (or film) `data` is, from its first bytes; None for anything else."""
    head = data[:16]
    if head.startswith(b"OggS"):
        return OGG
    if head.startswith(b"fLaC"):
        return Sound("audio/flac", "flac", taken_as_is=True)
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return Sound("audio/wav", "wav", taken_as_is=True)
    if head.startswith(b"ID3") or _mpeg_audio_frame(head):
        return Sound("audio/mpeg", "mp3", taken_as_is=True)
    if head[4:8] == b"ftyp":
        if head[8:12] in (b"M4A ", b"M4B "):
            return Sound("audio/mp4", "m4a", taken_as_is=True)
        return Sound("video/mp4", "mp4", taken_as_is=False)  # QuickTime and 3GP too
    return _converted(head)


def _converted(head: bytes) -> Sound | None:
    """The kinds ffmpeg reads that no endpoint is sure to take."""
    if head.startswith(b"\x1aE\xdf\xa3"):
        return Sound("video/webm", "webm", taken_as_is=False)  # WebM or Matroska
    if len(head) > 1 and head[0] == 0xFF and head[1] & 0xF6 == 0xF0:
        return Sound("audio/aac", "aac", taken_as_is=False)  # ADTS
    if head.startswith(b"#!AMR"):
        return Sound("audio/amr", "amr", taken_as_is=False)
    if head[:4] == b"FORM" and head[8:12] in (b"AIFF", b"AIFC"):
        return Sound("audio/aiff", "aiff", taken_as_is=False)
    if head.startswith(b"caff"):
        return Sound("audio/x-caf", "caf", taken_as_is=False)
    if head.startswith(b"0&\xb2u\x8ef\xcf\x11"):
        return Sound("audio/x-ms-wma", "wma", taken_as_is=False)
    return None


def _mpeg_audio_frame(head: bytes) -> bool:
    """An MPEG audio frame header: 11 sync bits, a version and a layer that exist."""
    if len(head) < 3 or head[0] != 0xFF or head[1] & 0xE0 != 0xE0:
        return False
    version, layer, rate = (head[1] >> 3) & 3, (head[1] >> 1) & 3, head[2] >> 4
    return version != 1 and layer != 0 and rate not in (0, 15)


async def upload(data: bytes, sound: Sound, max_seconds: float) -> Upload:
    """`data` as an endpoint takes it: as it is, or its audio track converted (see the
    module docstring). NotSound, saying what the recording is, when ffmpeg finds no sound in
    it or it lasts too long (by what its input says, else by the Opus it made, which stops a
    second past the limit); `ffmpeg.Failed` when ffmpeg itself fails."""
    if sound.taken_as_is:
        length = said_length(data, sound)
        if length is not None and length > max_seconds + 1:
            raise NotSound(too_long(length, max_seconds))
        return Upload(data, f"voice.{sound.extension}", sound.media_type)
    args = [*OGG_OPUS, "-t", f"{max_seconds + 1:g}", "pipe:1"]
    most = int(max_seconds * OPUS_BYTES_PER_S) + 64 * 1024
    try:
        made = await ffmpeg.convert(data, f".{sound.extension}", args, seconds=CONVERT_S, most=most)
    except ffmpeg.Failed as exc:
        if "matches no streams" in str(exc) or "does not contain any stream" in str(exc):
            raise NotSound("has no sound in it") from None
        raise
    if made.duration is not None and made.duration > max_seconds + 1:
        raise NotSound(too_long(made.duration, max_seconds))
    if not made.data:
        raise NotSound("has no sound in it")
    if opus_seconds(made.data) > max_seconds + 0.5:  # an input that did not say its length
        raise NotSound(f"lasts longer than {_minutes(max_seconds)}, which I transcribe at most")
    return Upload(made.data, f"voice.{OGG.extension}", OGG.media_type)


def said_length(data: bytes, sound: Sound) -> float | None:
    """How long a recording sent as it is lasts, where its header says so cheaply: Opus in
    Ogg (its identification header first), and WAV (its bytes over its byte rate)."""
    if sound is OGG and data[28:36] == b"OpusHead":
        return opus_seconds(data)
    if sound.media_type == "audio/wav" and data[12:16] == b"fmt ":
        rate = int.from_bytes(data[28:32], "little")
        return (len(data) - 44) / rate if rate else None
    return None


def opus_seconds(ogg: bytes) -> float:
    """How long Opus in Ogg lasts: its last page's granule position, in 48 kHz samples."""
    last = ogg.rfind(b"OggS")
    if last < 0 or len(ogg) < last + 14:
        return 0.0
    return int.from_bytes(ogg[last + 6 : last + 14], "little", signed=True) / 48_000


def too_long(seconds: float, most: float) -> str:
    """Why a recording is not transcribed for its length."""
    return f"lasts {_minutes(seconds)}; I transcribe at most {_minutes(most)}"


def _minutes(seconds: float) -> str:
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    return f"{whole // 60} min {whole % 60:02d} s" if whole % 60 else f"{whole // 60} min"
