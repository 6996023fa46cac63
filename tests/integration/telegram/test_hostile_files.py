"""Hostile files sent to the bot on Telegram, end to end with the defaults: each bomb or
broken file gets one sentence naming it, is downloaded once (the update is not handed over
again), and nothing is queued; a voice note whose bytes are no sound is told as such; and the
chat goes on answering after them."""

from __future__ import annotations

import pytest

from tests.fakes import hostile_files
from tests.fakes.llm import Reply
from tests.integration.telegram.test_replies import ANN, replies
from tests.integration.telegram.test_voice import VOICE
from tests.support.telegram import TelegramStack


async def test_every_hostile_file_is_told_by_name_once(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    hostile = [make() for make in hostile_files.ALL.values()]
    for name, data in hostile:
        tg_stack.tg.send_document(chat, ANN, data, name, "application/octet-stream")
    told = await replies(tg_stack, chat, len(hostile))
    assert [line.split(": ", 1)[0] for line in told] == [f"“{name}”" for name, _ in hostile]
    assert len(tg_stack.tg.shelf.downloads) == len(hostile)  # each once
    assert tg_stack.fake.requests == []
    tg_stack.fake.enqueue(Reply(text="Still here."))
    tg_stack.tg.send(chat, ANN, "hello?")
    assert (await replies(tg_stack, chat, len(hostile) + 1))[-1] == "Still here."


@pytest.mark.parametrize("tg_stack", [VOICE], indirect=True)
async def test_a_voice_note_that_is_no_sound_is_told_as_such(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    _, data = hostile_files.voice_that_is_png()
    tg_stack.tg.send_recording(chat, ANN, "voice", data)
    [told] = await replies(tg_stack, chat)
    assert told.endswith("is not a recording that can be heard"), told
    assert len(tg_stack.tg.shelf.downloads) == 1
    assert tg_stack.fake.requests == [] and tg_stack.fake.transcriptions.requests == []
