"""`/steer` and what `interrupt` does where a message is taken, on a real Redis with the real
mailbox and intake: the sentences a person reads, the admin rule, the chat's choice shared by
its topics; and a message in an `interrupt` chat stopping its own person's running turn (the
stop published as `/stop`'s is) once it is queued, never another person's, never the turn it
started itself, and costing a chat that did not choose it one read of its option."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from adapters.chat import steer_commands
from adapters.chat.access import Gate
from adapters.chat.intake import Arrival, Intake
from bot.config.settings import Settings
from bot.files.intake import MB, Limits
from bot.files.intake import Intake as FileIntake
from bot.files.reading import Readers, ReadLimits
from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.vocabulary.envelope import Sender
from bot.vocabulary.steering import SteerMode
from tests.adapters.test_intake import Jobs, Told

ANN = Sender(id="tg:1", name="Ann")
BOB = Sender(id="tg:2", name="Bob")
CHAT = "tg:-100"
TOPIC = "tg:-100:7"  # a forum topic: a session of its own in the same chat
JOINS = "Here a message you send while I work joins what I am doing at the next step."
HOW = "Say /steer steer, /steer queue or /steer interrupt to change it."
QUIET_S = 0.3  # how long a stop that should not come is waited for


@pytest.fixture
async def mailbox(redis_url: str) -> AsyncIterator[Mailbox]:
    redis = Redis.from_url(redis_url)
    yield Mailbox(redis, Jobs())
    await redis.aclose()


async def steer(
    mailbox: Mailbox,
    said: str,
    *,
    may_change: bool = True,
    default: SteerMode = "steer",
    session: str = CHAT,
) -> str:
    return await steer_commands.answer(
        mailbox, session, said, default=default, may_change=may_change
    )


async def test_steer_alone_says_the_mode_in_plain_words_and_how_to_change_it(
    mailbox: Mailbox,
) -> None:
    assert await steer(mailbox, "") == f"{JOINS} {HOW}"
    said = await steer(mailbox, "  ", default="interrupt")
    assert said == (
        "Here a message you send while I work stops what I am doing and I start on it. " + HOW
    )


async def test_a_choice_holds_for_the_whole_chat_and_survives_the_default(
    mailbox: Mailbox,
) -> None:
    changed = await steer(mailbox, "QUEUE", session=TOPIC)
    assert changed == "From now on a message you send while I work waits until I have answered."
    assert await mailbox.option(CHAT, "steer") == "queue"  # the chat's, not the topic's
    shown = await steer(mailbox, "", default="interrupt")
    assert shown == f"Here a message you send while I work waits until I have answered. {HOW}"
    await steer(mailbox, "steer")  # the default, chosen: kept, so a new default leaves it
    assert await steer(mailbox, "", default="interrupt") == f"{JOINS} {HOW}"


async def test_only_an_admin_changes_it_and_a_wrong_word_changes_nothing(
    mailbox: Mailbox,
) -> None:
    refused = await steer(mailbox, "interrupt", may_change=False)
    assert refused == f"{JOINS} Only an admin may change it."
    wrong = await steer(mailbox, "sometimes")
    assert wrong == "There is no steer mode 'sometimes': say steer, queue or interrupt."
    assert await mailbox.option(CHAT, "steer") is None


@dataclass
class Chat:
    """An intake for a group chat, and the stops published on the cancel channel."""

    intake: Intake
    cancels: PubSub
    n: int = 0

    @property
    def mailbox(self) -> Mailbox:
        return self.intake.mailbox

    async def say(self, sender: Sender, text: str = "hello") -> str:
        self.n += 1
        arrival = Arrival(
            id=f"tg:{self.n}", sender=sender, text=text, session=CHAT, platform="telegram",
            chat_kind="group", reply_to={"chat_id": -100}, where="group -100",
        )  # fmt: skip
        submitted = await self.intake.take(arrival, Told())
        assert submitted is not None and submitted.accepted
        return arrival.id

    async def stops(self) -> list[str]:
        """The sessions a stop was published for since the last look."""
        found: list[str] = []
        while message := await self.cancels.get_message(True, timeout=QUIET_S):
            found.append(message["data"].decode())
        return found

    async def running(self) -> None:
        """A worker takes the session's turn, as `SessionRunner.take_turns` does."""
        assert await self.mailbox.take_turn(CHAT, 30, 10) is not None

    async def queued(self) -> list[str]:
        return [envelope.id for envelope in await self.mailbox.peek(CHAT, count=10)]


def chat_fixture(default: SteerMode) -> Any:
    @pytest.fixture
    async def chat(redis_url: str, tmp_path: Path) -> AsyncIterator[Chat]:
        redis = Redis.from_url(redis_url)
        settings = Settings(_env_file=None, steer_mode=default)
        files = FileIntake(Readers(tmp_path / "files", ReadLimits()), Limits(file_bytes=MB))
        cancels = redis.pubsub()
        await cancels.subscribe(keys.CANCEL_CHANNEL)
        await cancels.get_message(timeout=1)  # the subscription's confirmation
        yield Chat(Intake(Gate(settings, redis), Mailbox(redis, Jobs()), files), cancels)
        await cancels.aclose()
        await redis.aclose()

    return chat


chat = chat_fixture("interrupt")
steering_chat = chat_fixture("steer")


async def test_a_message_stops_its_persons_running_turn_once_it_is_queued(chat: Chat) -> None:
    first = await chat.say(ANN, "write me a long story")
    await chat.running()
    assert await chat.stops() == []  # the message that started the turn stops nothing
    second = await chat.say(ANN, "no, a short one")
    assert await chat.stops() == [CHAT]
    assert await chat.queued() == [first, second]  # it waits for the next turn, in order


async def test_another_persons_message_waits_for_the_running_turn(chat: Chat) -> None:
    first = await chat.say(BOB, "write me a long story")
    await chat.running()
    second = await chat.say(ANN, "and then a poem")
    assert await chat.stops() == []
    assert await chat.queued() == [first, second]


async def test_nothing_is_stopped_while_no_turn_runs_or_for_the_turn_it_starts(
    chat: Chat,
) -> None:
    await chat.say(ANN)  # queued, no worker has it yet
    await chat.say(ANN)
    assert await chat.stops() == []
    await chat.mailbox.forget(CHAT)
    assert await chat.mailbox.take_lease(CHAT, 30) is not None  # a worker about to take it
    await chat.say(ANN)  # the head: the turn that starts is its own
    assert await chat.stops() == []


async def test_a_chat_that_chose_queue_or_steer_stops_nothing(chat: Chat) -> None:
    await chat.mailbox.set_option(CHAT, "steer", "queue")
    await chat.say(ANN)
    await chat.running()
    await chat.say(ANN)
    assert await chat.stops() == []


async def test_the_chats_choice_of_interrupt_holds_over_the_default(
    steering_chat: Chat,
) -> None:
    await steering_chat.mailbox.set_option(CHAT, "steer", "interrupt")
    await steering_chat.say(ANN)
    await steering_chat.running()
    await steering_chat.say(ANN)
    assert await steering_chat.stops() == [CHAT]


async def commands(redis: Redis) -> dict[str, int]:
    stats = await redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(v["calls"]) for name, v in stats.items()}


async def test_in_the_default_mode_a_message_costs_one_read_of_the_option(
    steering_chat: Chat,
) -> None:
    await steering_chat.say(ANN)
    await steering_chat.running()
    redis = steering_chat.mailbox.redis
    before = await commands(redis)
    await steering_chat.say(ANN)
    after = await commands(redis)
    spent = {name: after[name] - before.get(name, 0) for name in after}
    assert spent["hget"] == 1  # the chat's option, once
    for unused in ("exists", "lrange", "publish"):  # not asked whether a turn runs
        assert spent.get(unused, 0) == 0, unused
    await asyncio.sleep(0)
    assert await steering_chat.stops() == []
