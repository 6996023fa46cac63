"""The fake Telegram's sendVoice, driven by the real aiogram Bot with the multipart upload it
makes: Opus in Ogg, MP3 and M4A become voice notes (an Ogg note's length read from the stream
unless the bot gives it), anything else a document, as Telegram does; and the refusals Telegram
makes (a caption too long, a chat that allows no voice notes, an empty file, one past 50 MB)."""

from __future__ import annotations

import functools
import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest, TelegramEntityTooLarge, TelegramRetryAfter
from aiogram.methods import SendVoice
from aiogram.types import BufferedInputFile, ReplyParameters

from tests.fakes.tg import FakeTelegram, TgUser
from tests.fakes.tg.uploads import DOCUMENT_BYTES, ogg_pages, opus_seconds

ANN = TgUser(id=1001, first_name="Ann")
SINE = "sine=frequency=440:sample_rate=48000:duration={seconds}"


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as telegram:
        yield telegram


@functools.cache
def recorded(kind: str, seconds: float = 2.0) -> bytes:
    """A sine of `seconds` as ffmpeg writes it: `opus` (Ogg, a voice note), `mp3`, `m4a`,
    `wav` or `flac-ogg` (FLAC in Ogg, which is no Opus)."""
    codec = {"opus": ["-c:a", "libopus", "-f", "ogg"], "mp3": ["-c:a", "libmp3lame", "-f", "mp3"],
             "m4a": ["-c:a", "aac", "-f", "ipod"], "wav": ["-f", "wav"],
             "flac-ogg": ["-c:a", "flac", "-f", "ogg"]}[kind]  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "sound"
        command = ["ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                   SINE.format(seconds=seconds), *codec, str(out)]  # fmt: skip
        subprocess.run(command, check=True, timeout=60)
        return out.read_bytes()


@pytest.fixture
def note() -> bytes:
    """Two seconds of Opus in Ogg, as Telegram's clients record a voice note."""
    return recorded("opus", 2.0)


def test_the_recordings_are_what_they_say(note: bytes) -> None:
    assert note[:4] == b"OggS" and next(ogg_pages(note))[2].startswith(b"OpusHead")
    assert opus_seconds(recorded("flac-ogg")) is None
    assert recorded("m4a")[4:8] == b"ftyp" and recorded("wav")[:4] == b"RIFF"


@pytest.mark.parametrize(("seconds", "said"), [(2.0, 2), (3.4, 3), (0.6, 1), (5.5, 6), (2.497, 2)])
async def test_an_ogg_opus_note_is_a_voice_of_its_own_length(
    fake: FakeTelegram, bot: Bot, seconds: float, said: int
) -> None:
    chat = fake.private_chat(ANN)
    data = recorded("opus", seconds)
    sent = await bot(SendVoice(chat_id=chat.id, voice=BufferedInputFile(data, "note.ogg")))
    assert sent.voice is not None and sent.document is None
    assert (sent.voice.duration, sent.voice.mime_type) == (said, "audio/ogg")
    assert sent.voice.file_size == len(data)
    downloaded = await bot.download(sent.voice.file_id)
    assert downloaded is not None and downloaded.read() == data
    [kept] = fake.uploads(chat)
    assert kept.upload is not None and (kept.upload.kind, kept.upload.data) == ("voice", data)
    assert fake.messages(chat) == []  # a voice note is no text message


async def test_a_given_duration_and_caption_are_kept(
    fake: FakeTelegram, bot: Bot, note: bytes
) -> None:
    chat = fake.private_chat(ANN)
    sent = await bot.send_voice(
        chat.id, BufferedInputFile(note, "note.ogg"), duration=7, caption="*Listen*",
        parse_mode="MarkdownV2",
    )  # fmt: skip
    assert sent.voice is not None and sent.voice.duration == 7
    assert sent.caption == "Listen" and sent.caption_entities is not None
    assert sent.caption_entities[0].type == "bold"
    assert fake.uploads(chat)[0].text == "Listen"


@pytest.mark.parametrize(("kind", "mime_type"), [("mp3", "audio/mpeg"), ("m4a", "audio/mp4")])
async def test_mp3_and_m4a_are_voice_notes_too(
    fake: FakeTelegram, bot: Bot, kind: str, mime_type: str
) -> None:
    chat = fake.private_chat(ANN)
    data = recorded(kind)
    plain = await bot.send_voice(chat.id, BufferedInputFile(data, f"note.{kind}"))
    timed = await bot.send_voice(chat.id, BufferedInputFile(data, f"note.{kind}"), duration=2)
    assert plain.voice is not None and timed.voice is not None
    assert (plain.voice.mime_type, plain.voice.duration) == (mime_type, 0)
    assert (timed.voice.mime_type, timed.voice.duration) == (mime_type, 2)


@pytest.mark.parametrize("kind", ["wav", "flac-ogg"])
async def test_what_is_no_voice_note_is_sent_as_a_document(
    fake: FakeTelegram, bot: Bot, kind: str
) -> None:
    chat = fake.private_chat(ANN)
    data = recorded(kind)
    sent = await bot.send_voice(chat.id, BufferedInputFile(data, "sound.wav"), caption="Hear")
    assert sent.voice is None and sent.document is not None
    assert (sent.document.file_name, sent.document.file_size) == ("sound.wav", len(data))
    assert sent.caption == "Hear"
    [kept] = fake.uploads(chat)
    assert kept.upload is not None and (kept.upload.kind, kept.upload.data) == ("document", data)


async def test_the_topic_and_the_reply_are_kept(fake: FakeTelegram, bot: Bot, note: bytes) -> None:
    forum = fake.supergroup("Radio", forum=True)
    topic = fake.topic(forum, "Clips")
    asked = fake.send(forum, ANN, "say it", thread_id=topic)["message"]["message_id"]
    sent = await bot.send_voice(
        forum.id,
        BufferedInputFile(note, "note.ogg"),
        message_thread_id=topic,
        reply_parameters=ReplyParameters(message_id=asked),
    )
    assert sent.message_thread_id == topic and sent.voice is not None
    [kept] = fake.uploads(forum, topic)
    assert (kept.thread_id, kept.reply_to) == (topic, asked)
    with pytest.raises(TelegramBadRequest, match="message thread not found"):
        await bot.send_voice(forum.id, BufferedInputFile(note, "n.ogg"), message_thread_id=99)
    with pytest.raises(TelegramBadRequest, match="message to be replied not found"):
        await bot.send_voice(
            forum.id,
            BufferedInputFile(note, "n.ogg"),
            reply_parameters=ReplyParameters(message_id=777),
        )


async def test_what_telegram_refuses_is_refused(fake: FakeTelegram, bot: Bot, note: bytes) -> None:
    chat = fake.private_chat(ANN)
    with pytest.raises(TelegramBadRequest, match="message caption is too long"):
        await bot.send_voice(chat.id, BufferedInputFile(note, "n.ogg"), caption="c" * 1025)
    with pytest.raises(TelegramBadRequest, match="file must be non-empty"):
        await bot.send_voice(chat.id, BufferedInputFile(b"", "empty.ogg"))
    with pytest.raises(TelegramBadRequest, match="wrong file identifier"):
        await bot.send_voice(chat.id, "AwACAgIAAxkBAAIBY2")
    with pytest.raises(TelegramEntityTooLarge):
        await bot.send_voice(chat.id, BufferedInputFile(b"x" * (DOCUMENT_BYTES + 1), "big.ogg"))
    assert fake.uploads(chat) == []


async def test_a_chat_that_allows_no_voice_notes(fake: FakeTelegram, bot: Bot, note: bytes) -> None:
    chat = fake.private_chat(ANN)
    fake.methods.uploads.voice_forbidden.add(chat.id)
    with pytest.raises(TelegramBadRequest, match="Bad Request: VOICE_MESSAGES_FORBIDDEN"):
        await bot.send_voice(chat.id, BufferedInputFile(note, "note.ogg"))
    assert fake.uploads(chat) == []
    other = fake.private_chat(TgUser(id=1002, first_name="Bo"))
    sent = await bot.send_voice(other.id, BufferedInputFile(note, "note.ogg"))
    assert sent.voice is not None


async def test_voice_notes_count_against_the_chat_s_flood_limits(
    fake: FakeTelegram, bot: Bot, note: bytes
) -> None:
    chat = fake.private_chat(ANN)
    for _ in range(3):  # the chat's burst
        await bot.send_voice(chat.id, BufferedInputFile(note, "note.ogg"))
    with pytest.raises(TelegramRetryAfter):
        await bot.send_voice(chat.id, BufferedInputFile(note, "note.ogg"))
    assert len(fake.uploads(chat)) == 3 and fake.floods == 1
