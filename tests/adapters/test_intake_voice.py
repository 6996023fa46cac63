"""Voice notes through the intake, on a real Redis, the real mailbox and the real transcriber
against the fake endpoint: the transcript becomes the envelope's text and `heard`; one that
only its transcript can show is for the bot (in a group, neither mentioning nor answering
it) is silent until it does, and a stranger's is neither fetched nor remembered."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from adapters.chat.access import Gate, refusal
from adapters.chat.intake import Files, Intake
from bot.config.settings import Settings
from bot.files.intake import MB, Arrived, Limits
from bot.files.intake import Intake as FileIntake
from bot.files.reading import Readers, ReadLimits
from bot.files.voice import MARK, NO_BACKEND, Endpoint, Transcriber
from bot.mailbox.inbox import Mailbox
from tests.adapters.test_intake import ANN, SESSION, STRANGER, Jobs, Told, arrival, queued
from tests.fakes.llm import OPENAI_KEY, FakeLLM
from tests.support.audio import tone

NOTE = tone("ogg", hz=800)


class Fetches:
    """A platform's download of one voice note, counted."""

    def __init__(self) -> None:
        self.count = 0

    def files(self, data: bytes = NOTE) -> Files:
        async def fetch() -> list[Arrived]:
            self.count += 1
            return [Arrived(data, "voice note")]

        return Files((("voice note", len(data)),), fetch, (1.0,))


@pytest.fixture
async def intake(redis_url: str, tmp_path: Path, fake_llm: FakeLLM) -> AsyncIterator[Intake]:
    redis = Redis.from_url(redis_url)
    settings = Settings(_env_file=None, allowed_users=[ANN.id], user_messages_per_minute=2)
    store = tmp_path / "files"
    endpoint = Endpoint("whisper-1", fake_llm.openai_base_url, OPENAI_KEY, 10, 600)
    voice = Transcriber(endpoint)
    yield Intake(
        Gate(settings, redis),
        Mailbox(redis, Jobs()),
        FileIntake(Readers(store, ReadLimits()), Limits(), voice),
    )
    await voice.aclose()
    await redis.aclose()


async def test_the_transcript_is_the_text_the_model_reads_and_heard(
    intake: Intake, fake_llm: FakeLLM
) -> None:
    fake_llm.transcriptions.script(NOTE, "Is it going to rain?")
    told, fetches = Told(), Fetches()
    assert await intake.take(arrival(ANN, "In Lisbon", files=fetches.files()), told) is not None
    (envelope,) = await intake.mailbox.peek(SESSION)
    assert envelope.text == f"In Lisbon\n\n{MARK}\nIs it going to rain?"
    assert (envelope.heard, envelope.attachments, told) == ("Is it going to rain?", [], [])


async def test_a_voice_note_only_its_transcript_can_address_is_silent_until_it_does(
    intake: Intake, fake_llm: FakeLLM
) -> None:
    fake_llm.transcriptions.script(NOTE, "see you at lunch")
    told, fetches = Told(), Fetches()

    def named(said: str) -> bool:
        return "parley" in said.lower()

    chatter = arrival(ANN, "", 1, files=fetches.files(), for_bot=named)
    assert await intake.take(chatter, told) is None
    stranger = arrival(STRANGER, "", 2, files=fetches.files(), for_bot=named)
    assert await intake.take(stranger, told) is None
    assert (told, fetches.count, await queued(intake)) == ([], 1, [])  # the stranger's: unfetched
    await intake.take(arrival(STRANGER, "hello", 3), told)  # addressed later: told, once
    assert told == [refusal(STRANGER.id) + " (I will not repeat this message.)"]
    other = tone("ogg", hz=820)
    fake_llm.transcriptions.script(other, "Parley, is it going to rain?")
    asked = arrival(ANN, "", 4, files=fetches.files(other), for_bot=named)
    assert await intake.take(asked, Told()) is not None
    assert await queued(intake) == ["tg:1004"]


async def test_without_a_transcriber_a_voice_note_is_told_and_not_fetched(
    redis_url: str, tmp_path: Path
) -> None:
    redis = Redis.from_url(redis_url)
    settings = Settings(_env_file=None, allowed_users=[ANN.id])
    files = FileIntake(Readers(tmp_path / "files", ReadLimits()), Limits(file_bytes=MB))
    intake = Intake(Gate(settings, redis), Mailbox(redis, Jobs()), files)
    told, fetches = Told(), Fetches()
    try:
        assert await intake.take(arrival(ANN, "", files=fetches.files()), told) is None
    finally:
        await redis.aclose()
    assert (told, fetches.count) == ([NO_BACKEND], 0)
