"""Replies said aloud on Telegram, end to end: `/voice` chosen in the chat, the answer said by
the fake speech endpoint through the real `openai` SDK and posted by the real aiogram as a
voice message (`sendVoice`, Opus in Ogg) below its text, which stays whole; counted in the
person's day and kept with the answer's message in the record; converted by ffmpeg when the
endpoint answers MP3; sent as a file to a person who keeps voice messages out; and the text
alone, nothing said in the chat, when the endpoint fails."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import pytest
from redis.asyncio import Redis
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from bot.files.audio import opus_seconds
from bot.files.voice import MARK
from bot.people.limits import day
from bot.redis import keys
from bot.session.voice import speakable
from bot.telemetry import metrics
from tests.fakes.llm import Reply
from tests.fakes.llm.speech import kind_of
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.audio import tone
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e
SPEECH = {"speech": "1"}
ANSWER = (
    "Lisbon is the **capital** of Portugal. See [its page](https://example.org/lisbon).\n\n"
    "```sh\ncurl example.org\n```\nIt sits on the Tagus."
)
ON = "From now on I answer you in text and with a voice note."


async def charged(stack: TelegramStack, person: str, turn: str) -> int | None:
    """What the person's day was charged for a reply said aloud in the turn of `turn`."""
    redis = Redis.from_url(stack.redis_url)
    try:
        key = keys.limit(person, f"tokens:{day(datetime.now(UTC))}")
        value = await redis.hget(key, f"turn:voice:{turn}")
    finally:
        await redis.aclose()
    return None if value is None else int(value)


async def carrying(stack: TelegramStack, sha256: str) -> list[tuple[str, str]]:
    """The recorded messages that carry the file `sha256`: each one's role and text."""
    engine = create_async_engine(stack.env["DATABASE_URL"])
    query = text(
        "SELECT m.role, m.text FROM messages m JOIN message_files f ON f.message_id = m.id "
        "WHERE f.sha256 = :sha"
    )
    try:
        async with engine.connect() as db:
            return [(str(r[0]), str(r[1])) for r in await db.execute(query, {"sha": sha256})]
    finally:
        await engine.dispose()


@pytest.mark.parametrize("tg_stack", [SPEECH], indirect=True)
async def test_a_person_who_chose_voice_hears_the_answer_below_its_text(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg, speech = tg_stack.tg, tg_stack.fake.speech
    sent = metrics.VOICE_REPLIES.labels("telegram", "sent")
    before = sent._value.get()
    chat = tg.private_chat(ANN)
    tg.send(chat, ANN, "/voice on")
    assert await replies(tg_stack, chat) == [ON]
    tg_stack.fake.enqueue(Reply(text=ANSWER))
    update = tg.send(chat, ANN, "Where is Lisbon?")
    await replies(tg_stack, chat, 2)
    text, note = tg.everything(chat)[1:]
    assert text.text.startswith("Lisbon is the capital of Portugal.")  # the text, whole
    assert text.text.endswith("It sits on the Tagus.")
    assert note.upload is not None and note.upload.kind == "voice"
    assert note.message_id > text.message_id
    [asked] = speech.requests
    said = "Lisbon is the capital of Portugal. See its page. It sits on the Tagus."
    assert asked.body == {
        "model": "gpt-4o-mini-tts", "voice": "alloy", "input": said, "response_format": "opus",
    }  # fmt: skip
    assert speakable(ANSWER, 1500) == said
    assert kind_of(note.upload.data) == "opus"
    assert round(opus_seconds(note.upload.data)) == round(asked.milliseconds / 1000)
    assert sent._value.get() == before + 1
    assert await charged(tg_stack, "tg:1001", f"tg:{update['update_id']}") == len(said)
    sha = hashlib.sha256(note.upload.data).hexdigest()
    assert await carrying(tg_stack, sha) == [("assistant", ANSWER)]  # goes when the answer goes
    async with tg_stack.client() as client:  # the history shows it again
        recent = (await client.get(f"/api/sessions/tg:{chat.id}")).json()["recent"]
    assert [m["voice"]["sha256"] for m in recent if m["voice"]] == [sha]
    assert recent[-1]["voice"]["media_type"] == "audio/ogg"


@pytest.mark.parametrize("tg_stack", [SPEECH | {"voice": "1"}], indirect=True)
async def test_spoken_answers_aloud_only_a_voice_note(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg, speech = tg_stack.tg, tg_stack.fake.speech
    chat = tg.private_chat(ANN)
    tg.send(chat, ANN, "/voice spoken")
    await replies(tg_stack, chat)
    tg_stack.fake.enqueue(Reply(text="Typed, so read."), Reply(text="Spoken, so said."))
    tg.send(chat, ANN, "a typed question")
    await replies(tg_stack, chat, 2)
    assert speech.requests == [] and tg.uploads(chat) == []
    note = tone("ogg", hz=440)
    tg_stack.fake.transcriptions.script(note, "a spoken question")
    tg.send_recording(chat, ANN, "voice", note, duration=1)
    await replies(tg_stack, chat, 3)
    [asked] = speech.requests
    assert asked.text == "Spoken, so said."
    [voice] = tg.uploads(chat)
    assert voice.upload is not None and voice.upload.kind == "voice"
    assert MARK in tg_stack.fake.requests[1].last_user_text()


@pytest.mark.parametrize("tg_stack", [SPEECH | {"PARLEY_VOICE_REPLIES": "on"}], indirect=True)
async def test_an_endpoint_that_answers_mp3_is_converted_to_a_voice_note(
    tg_stack: TelegramStack,
) -> None:
    """PARLEY_VOICE_REPLIES=on: nobody had to choose."""
    await tg_stack.start_worker()
    tg, speech = tg_stack.tg, tg_stack.fake.speech
    speech.answer_format = "mp3"  # a server that makes MP3 whatever it is asked
    chat = tg.private_chat(ANN)
    tg_stack.fake.enqueue(Reply(text="Converted for you."))
    tg.send(chat, ANN, "hello")
    await replies(tg_stack, chat)
    [voice] = tg.uploads(chat)
    assert voice.upload is not None and voice.upload.kind == "voice"
    data = voice.upload.data
    assert data[:4] == b"OggS" and data[28:36] == b"OpusHead"  # made Opus in Ogg by ffmpeg
    assert abs(opus_seconds(data) - speech.requests[0].milliseconds / 1000) < 0.2


@pytest.mark.parametrize("tg_stack", [SPEECH | {"PARLEY_VOICE_REPLIES": "on"}], indirect=True)
async def test_voice_messages_kept_out_get_a_file_and_a_failing_endpoint_the_text_alone(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg, speech = tg_stack.tg, tg_stack.fake.speech
    failed = metrics.VOICE_REPLIES.labels("telegram", "failed")
    before = failed._value.get()
    chat = tg.private_chat(ANN)
    tg.methods.uploads.voice_forbidden.add(chat.id)  # Premium: no voice messages from bots
    tg_stack.fake.enqueue(Reply(text="As a file."), Reply(text="Text alone."))
    tg.send(chat, ANN, "first")
    await replies(tg_stack, chat)
    [file] = tg.uploads(chat)
    assert file.upload is not None and file.upload.kind == "document"
    assert file.upload.name == "voice-reply.ogg" and kind_of(file.upload.data) == "opus"
    speech.failing.extend([500, 500])  # the first try and the SDK's one more
    update = tg.send(chat, ANN, "second")
    shown = await replies(tg_stack, chat, 2)
    assert shown == ["As a file.", "Text alone."]  # nothing said about the voice note
    assert len(tg.uploads(chat)) == 1
    assert failed._value.get() == before + 1
    assert await charged(tg_stack, "tg:1001", f"tg:{update['update_id']}") is None


async def test_with_the_defaults_voice_is_not_set_up_and_says_so(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    chat = tg.private_chat(ANN)
    tg.send(chat, ANN, "/voice on")
    assert await replies(tg_stack, chat) == ["Voice replies aren't set up here: I answer in text."]
    tg_stack.fake.enqueue(Reply(text="Just text."))
    tg.send(chat, ANN, "hi")
    assert (await replies(tg_stack, chat, 2))[1] == "Just text."
    assert tg.uploads(chat) == [] and tg_stack.fake.speech.requests == []
