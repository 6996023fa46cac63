"""Recordings told from their bytes whatever their name, sent as they are where an endpoint
takes them, their sound taken out by ffmpeg where not, and refused, in a sentence, where
there is no sound or too much of it."""

from __future__ import annotations

import pytest

from bot.files import audio
from tests.support.audio import live_webm, tone, video_note
from tests.support.documents import pdf_bytes
from tests.support.images import image_bytes


@pytest.mark.parametrize(
    ("kind", "media_type", "as_is"),
    [("ogg", "audio/ogg", True), ("mp3", "audio/mpeg", True), ("wav", "audio/wav", True),
     ("aac", "audio/aac", False), ("webm", "video/webm", False)],
)  # fmt: skip
def test_sound_is_told_from_its_bytes(kind: str, media_type: str, as_is: bool) -> None:
    sound = audio.sniff(tone(kind))
    assert sound is not None and (sound.media_type, sound.taken_as_is) == (media_type, as_is)


def test_what_is_no_sound_is_none() -> None:
    for data in (image_bytes((20, 20), "PNG"), pdf_bytes(["x"]), b"PK\x03\x04", b"", b"\xff"):
        assert audio.sniff(data) is None
    assert audio.sniff(video_note()) == audio.Sound("video/mp4", "mp4", taken_as_is=False)


async def test_an_endpoints_kind_goes_as_it_came_under_its_own_name() -> None:
    song = tone("mp3")
    sound = audio.sniff(song)
    assert sound is not None
    assert await audio.upload(song, sound, 600) == audio.Upload(song, "voice.mp3", "audio/mpeg")


async def test_a_video_notes_sound_becomes_opus_in_ogg() -> None:
    film = video_note(seconds=2.0)
    made = await audio.upload(film, audio.Sound("video/mp4", "mp4", taken_as_is=False), 600)
    assert made.name == "voice.ogg" and made.media_type == "audio/ogg"
    assert audio.sniff(made.data) == audio.OGG and len(made.data) < len(film) / 2


async def test_no_sound_or_too_much_of_it_is_said() -> None:
    silent = audio.Sound("video/mp4", "mp4", taken_as_is=False)
    with pytest.raises(audio.NotSound, match=r"^has no sound in it$"):
        await audio.upload(video_note(sound=False), silent, 600)
    adts = audio.Sound("audio/aac", "aac", taken_as_is=False)
    with pytest.raises(audio.NotSound, match=r"^lasts 3 s; I transcribe at most 1 s$"):
        await audio.upload(tone("aac", seconds=3.0), adts, 1)
    # A WebM made by streaming says no length: the Opus made from it does
    streamed = audio.Sound("video/webm", "webm", taken_as_is=False)
    with pytest.raises(
        audio.NotSound, match=r"^lasts longer than 1 s, which I transcribe at most$"
    ):
        await audio.upload(live_webm(seconds=4.0), streamed, 1)


async def test_a_recording_sent_as_it_is_is_refused_by_the_length_its_header_says() -> None:
    for kind in ("ogg", "wav"):
        long_one = tone(kind, seconds=4.0)
        sound = audio.sniff(long_one)
        assert sound is not None and 3.9 < (audio.said_length(long_one, sound) or 0) < 4.1
        with pytest.raises(audio.NotSound, match=r"^lasts 4 s; I transcribe at most 2 s$"):
            await audio.upload(long_one, sound, 2)
    song = tone("mp3", seconds=4.0)
    assert audio.said_length(song, audio.Sound("audio/mpeg", "mp3", True)) is None


async def test_a_recording_as_long_as_the_limit_fits_the_output_bound() -> None:
    """A pure tone is what a variable bit rate spends most on: constrained, it stays under
    the bytes per second the output is bounded by."""
    made = await audio.upload(
        tone("aac", seconds=120.0), audio.Sound("audio/aac", "aac", False), 120
    )
    assert 119 < audio.opus_seconds(made.data) < 121
    assert len(made.data) < 120 * audio.OPUS_BYTES_PER_S


async def test_the_opus_made_says_how_long_it_lasts() -> None:
    made = await audio.upload(tone("aac", seconds=2.0), audio.Sound("audio/aac", "aac", False), 60)
    assert 1.9 < audio.opus_seconds(made.data) < 2.2
