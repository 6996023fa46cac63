"""`/voice` on a real Redis with the real mailbox: the sentences a person reads, each person's
own choice in each chat (a group's other people and the person's other chats keep theirs),
the deployment's default until they choose, and a deployment without a speech endpoint
keeping nothing and saying so."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from adapters.chat import voice_commands
from bot.mailbox.inbox import Mailbox
from bot.vocabulary.voice import VoiceMode
from tests.adapters.test_intake import Jobs

GROUP, TOPIC, OTHER = "tg:-100", "tg:-100:7", "tg:-200"
HOW = "Say /voice on, /voice off or /voice spoken (a voice note only when you spoke) to change it."


@pytest.fixture
async def mailbox(redis_url: str) -> AsyncIterator[Mailbox]:
    redis = Redis.from_url(redis_url)
    yield Mailbox(redis, Jobs())
    await redis.aclose()


async def voice(
    mailbox: Mailbox, person: str, said: str, *, session: str = GROUP,
    default: VoiceMode = "off", speaks: bool = True,
) -> str:  # fmt: skip
    return await voice_commands.answer(
        mailbox, session, person, said, default=default, speaks=speaks
    )


async def test_each_person_chooses_for_themselves_in_each_chat(mailbox: Mailbox) -> None:
    assert await voice(mailbox, "tg:1", "") == f"Here I answer you in text. {HOW}"
    assert await voice(mailbox, "tg:1", " ON ") == (
        "From now on I answer you in text and with a voice note."
    )
    assert await voice(mailbox, "tg:2", "spoken") == (
        "From now on I answer you with a voice note too when you send me one, else in text."
    )
    # a topic is in its chat: the choice made in the group holds there
    assert (await voice(mailbox, "tg:1", "", session=TOPIC)).startswith(
        "Here I answer you in text and with a voice note."
    )
    assert (await voice(mailbox, "tg:1", "", session=OTHER)).startswith(
        "Here I answer you in text."
    )
    assert await mailbox.options(GROUP, "voice:tg:1", "voice:tg:2") == ["on", "spoken"]


async def test_the_default_holds_until_a_person_chooses_and_nonsense_changes_nothing(
    mailbox: Mailbox,
) -> None:
    assert (await voice(mailbox, "tg:1", "", default="on")).startswith(
        "Here I answer you in text and with a voice note."
    )
    assert await voice(mailbox, "tg:1", "loud") == (
        "There is no voice setting 'loud': say on, off or spoken."
    )
    assert await voice(mailbox, "tg:1", "off", default="on") == "From now on I answer you in text."
    assert await mailbox.option(GROUP, "voice:tg:1") == "off"  # kept though it is the default


async def test_without_a_speech_endpoint_nothing_is_kept(mailbox: Mailbox) -> None:
    said = await voice(mailbox, "tg:1", "on", speaks=False)
    assert said == "Voice replies aren't set up here: I answer in text."
    assert await mailbox.option(GROUP, "voice:tg:1") is None
