"""Voice notes, audio files and video notes sent to the bot on Telegram, end to end: fetched
with getFile from the fake Bot API, transcribed by the fake OpenAI endpoint through the real
SDK (a video note's sound taken out by ffmpeg first), the transcript the turn's text for the
fake model and a collapsed quote above the answer; in a group, heard for the bot's name; and
one sentence, nothing queued, where there is no transcript to be had."""

from __future__ import annotations

import pytest

from bot.files.voice import FAILED, MARK, NO_BACKEND
from tests.fakes.llm import RecordedRequest, Reply
from tests.fakes.tg import TgUser
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.audio import tone, video_note
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e
VOICE = {"voice": "1"}


def echo(request: RecordedRequest) -> Reply:
    """The answer names what the model was told last, after the time stamp."""
    return Reply(text="Told: " + request.last_user_text().split("\n", 1)[1].replace("\n", " | "))


@pytest.mark.parametrize("tg_stack", [VOICE], indirect=True)
async def test_a_voice_note_is_the_turns_text_and_is_quoted_above_the_answer(
    tg_stack: TelegramStack,
) -> None:
    tg, heard = tg_stack.tg, tg_stack.fake.transcriptions
    await tg_stack.start_worker()
    tg_stack.fake.responder = echo
    note = tone("ogg", hz=440)
    heard.script(note, "What is the capital of *Portugal*?")
    chat = tg.private_chat(ANN)
    update = tg.send_recording(chat, ANN, "voice", note, duration=1, caption="Quick one")
    [shown] = await replies(tg_stack, chat)
    quote = "🎤 What is the capital of *Portugal*?"
    assert shown == f"{quote}\n\nTold: Quick one |  | {MARK} | What is the capital of Portugal?"
    [message] = tg.messages(chat)
    assert message.entities[0] == {
        "type": "expandable_blockquote",
        "offset": 0,
        "length": len(quote) + 1,
    }  # fmt: skip (🎤 is two units)
    [sent] = heard.requests
    assert (sent.filename, sent.data, sent.fields) == (
        "voice.ogg", note, {"model": "whisper-1", "response_format": "json"},
    )  # fmt: skip
    assert heard.rejected == []
    tg.queue(update)  # Telegram delivers it again: answered once, heard once
    tg.send(chat, ANN, "And Spain?")
    assert (await replies(tg_stack, chat, 2))[1] == "Told: And Spain?"
    assert len(heard.requests) == 1 and len(tg_stack.fake.requests) == 2


@pytest.mark.parametrize("tg_stack", [VOICE], indirect=True)
async def test_a_video_notes_sound_is_taken_out_and_an_audio_file_sent_as_it_is(
    tg_stack: TelegramStack,
) -> None:
    tg, heard = tg_stack.tg, tg_stack.fake.transcriptions
    await tg_stack.start_worker()
    tg_stack.fake.responder = echo
    heard.answer_any("Look at my cat.")
    chat = tg.private_chat(ANN)
    film = video_note(seconds=2.0)
    tg.send_recording(chat, ANN, "video_note", film, duration=2)
    [shown] = await replies(tg_stack, chat)
    assert shown.endswith(f"Told: {MARK} | Look at my cat.")
    [sent] = heard.requests
    assert sent.filename == "voice.ogg" and sent.data.startswith(b"OggS")
    assert len(sent.data) < len(film) / 2  # the sound alone, as Opus
    song = tone("mp3", hz=550)
    heard.script(song, "La la la.")
    tg.send_recording(chat, ANN, "audio", song, mime_type="audio/mpeg", file_name="song.mp3")
    assert (await replies(tg_stack, chat, 2))[1].endswith(f"{MARK} | La la la.")
    assert (heard.requests[1].filename, heard.requests[1].data) == ("voice.mp3", song)


@pytest.mark.parametrize("tg_stack", [VOICE], indirect=True)
async def test_in_a_group_a_voice_note_is_for_the_bot_when_it_names_it_or_answers_it(
    tg_stack: TelegramStack,
) -> None:
    tg, heard = tg_stack.tg, tg_stack.fake.transcriptions
    await tg_stack.start_worker()
    tg_stack.fake.responder = echo
    group = tg.group("Family")
    chatter, asked, followed = tone("ogg", hz=300), tone("ogg", hz=320), tone("ogg", hz=340)
    heard.script(chatter, "See you all at lunch.")
    heard.script(asked, "Parley, what time is it in Tokyo?")
    heard.script(followed, "And in Paris?")
    tg.send_recording(group, ANN, "voice", chatter)  # heard, and not for the bot
    tg.send_recording(group, ANN, "voice", asked)
    [answer] = await replies(tg_stack, group)
    assert answer.endswith("Parley, what time is it in Tokyo?")
    [message] = tg.messages(group)
    tg.send_recording(group, ANN, "voice", followed, reply_to=message.message_id)
    assert (await replies(tg_stack, group, 2))[1].endswith(f"{MARK} | And in Paris?")
    assert len(tg_stack.fake.requests) == 2 and len(heard.requests) == 3


@pytest.mark.parametrize("tg_stack", [{"PARLEY_ALLOWED_USERS": "tg:1001"}], indirect=True)
async def test_without_a_backend_a_voice_note_gets_one_sentence_and_nothing_is_fetched(
    tg_stack: TelegramStack,
) -> None:
    """With the defaults: no transcription model is set."""
    tg = tg_stack.tg
    await tg_stack.start_worker()
    chat = tg.private_chat(ANN)
    tg.send_recording(chat, ANN, "voice", tone("ogg"))
    assert await replies(tg_stack, chat) == [NO_BACKEND]
    group = tg.group("Chatter")
    eve = TgUser(id=666, first_name="Eve", username="eve")
    tg.send_recording(group, eve, "voice", tone("ogg"))  # a stranger's, maybe for the bot
    tg.send_recording(group, ANN, "voice", tone("ogg"))  # maybe for the bot: not told
    tg.send(group, ANN, "/help")  # taken after the notes: updates go in order
    [helped] = await replies(tg_stack, group)
    assert "/new" in helped
    assert tg.shelf.downloads == [] and tg_stack.fake.requests == []


@pytest.mark.parametrize("tg_stack", [VOICE], indirect=True)
async def test_a_failed_or_too_long_transcription_gets_one_sentence(
    tg_stack: TelegramStack,
) -> None:
    tg, heard = tg_stack.tg, tg_stack.fake.transcriptions
    await tg_stack.start_worker()
    tg_stack.fake.responder = echo
    chat = tg.private_chat(ANN)
    heard.failing = [500, 500, 500]  # the first try and the SDK's two more
    note = tone("ogg", hz=480)
    tg.send_recording(chat, ANN, "voice", note)
    assert await replies(tg_stack, chat) == [FAILED]
    assert len(heard.requests) == 3 and tg_stack.fake.requests == []
    tg.send_recording(chat, ANN, "voice", note)  # sent again, once the endpoint is back
    said = heard.default(heard.requests[-1].sha256)
    assert (await replies(tg_stack, chat, 2))[1] == f"🎤 {said}\n\nTold: {MARK} | {said}"
    tg.send_recording(chat, ANN, "voice", note, duration=3600)
    told = (await replies(tg_stack, chat, 3))[2]
    assert told == "That recording lasts 60 min; I transcribe at most 10 min."
    assert len(tg.shelf.downloads) == 2
