"""The press decision every platform shares, on a real Redis with the real mailbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from redis.asyncio import Redis

from adapters.chat.decisions import FORBIDDEN, Choice, Press, PromptState, claim, decide, queue
from bot.mailbox.inbox import Mailbox
from bot.redis.confirmations import CallSummary, Confirmation, Confirmations
from bot.vocabulary.envelope import Sender

ANN = Sender(id="tg:1", name="Ann")
BOB = Sender(id="tg:2", name="Bob")
ADMIN = Sender(id="tg:9", name="Root", is_admin=True)


class Jobs:
    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> None:
        return None


@dataclass
class World:
    confirmations: Confirmations
    mailbox: Mailbox

    async def ask(self) -> Confirmation:
        calls = [CallSummary(call_id="c1", name="launch", arguments={"target": "moon"})]
        return await self.confirmations.create(
            "tg:100", "tg:7", ANN.id, calls, ttl=60, platform="telegram", reply_to={"chat_id": 100}
        )

    async def press(self, record: Confirmation, choice: Choice, person: Sender) -> Any:
        press = Press(record.id, choice, person, "telegram")
        return await decide(press, self.confirmations, self.mailbox)

    async def queued(self) -> list[str]:
        return [e.id for e in await self.mailbox.peek("tg:100", count=10)]


@pytest.fixture
async def world(redis_url: str) -> AsyncIterator[World]:
    redis = Redis.from_url(redis_url)
    yield World(Confirmations(redis), Mailbox(redis, Jobs()))
    await redis.aclose()


async def test_the_requester_decides_and_the_decision_is_queued(world: World) -> None:
    record = await world.ask()
    answer = await world.press(record, "approve", ANN)
    assert (answer.text, answer.alert) == ("Approved.", False)
    assert answer.prompt == PromptState("approved", ANN.id, by_presser=True)
    (queued,) = await world.mailbox.peek("tg:100")
    assert queued.id == f"decision:{record.id}" and queued.approve and queued.sender == ANN


async def test_always_allow_shows_as_remembered(world: World) -> None:
    answer = await world.press(await world.ask(), "remember", ADMIN)
    assert answer.prompt == PromptState("remembered", ADMIN.id, by_presser=True)


async def test_someone_else_is_refused_and_changes_nothing(world: World) -> None:
    record = await world.ask()
    answer = await world.press(record, "deny", BOB)
    assert (answer.text, answer.alert, answer.prompt) == (FORBIDDEN, True, None)
    current = await world.confirmations.get(record.id)
    assert current is not None and current.status == "pending"
    assert await world.queued() == []


async def test_the_first_decision_wins_and_a_late_press_names_its_decider(world: World) -> None:
    record = await world.ask()
    await world.press(record, "deny", ANN)
    late = await world.press(record, "approve", ADMIN)
    assert late.alert and "already denied" in late.text
    assert late.prompt == PromptState("denied", ANN.id, by_presser=False)
    assert await world.queued() == [f"decision:{record.id}"]


async def test_a_decision_never_queued_is_queued_by_the_next_press(world: World) -> None:
    record = await world.ask()
    assert await world.confirmations.decide(record.id, "approved", ANN.id) == "ok"
    assert await world.queued() == []
    again = await world.press(record, "approve", ANN)
    assert again.alert and again.prompt is not None
    assert await world.queued() == [f"decision:{record.id}"]


async def test_a_decision_queued_by_someone_else_s_press_stays_the_decider_s(
    world: World,
) -> None:
    record = await world.ask()
    assert await world.confirmations.decide(record.id, "approved", ANN.id) == "ok"
    await world.press(record, "remember", ADMIN)
    (queued,) = await world.mailbox.peek("tg:100")
    assert queued.sender.id == ANN.id and queued.approve and not queued.remember


async def test_a_request_that_is_gone_is_said_so(world: World) -> None:
    record = await world.ask()
    await world.confirmations.redis.flushall()
    answer = await world.press(record, "approve", ANN)
    assert answer.alert and "no longer available" in answer.text and answer.prompt is None


async def test_a_decision_is_answered_where_the_request_was_asked(world: World) -> None:
    record = await world.ask()
    await world.press(record, "approve", ANN)
    (queued,) = await world.mailbox.peek("tg:100")
    assert (queued.platform, queued.reply_to) == ("telegram", {"chat_id": 100})


async def test_a_decision_made_on_another_platform_carries_no_address_of_the_first(
    world: World,
) -> None:
    caller = Sender(id=ANN.id, name="web", is_admin=True)
    press = Press((await world.ask()).id, "deny", caller, "http", own_only=True)
    claimed = await claim(press, world.confirmations)
    assert claimed.outcome == "ok" and claimed.confirmation is not None
    queued = await queue(press, claimed.confirmation, world.mailbox)
    assert (queued.platform, queued.reply_to, queued.sender) == ("http", {}, caller)
    assert queued.approve is False and not queued.remember
    assert await world.queued() == [queued.id]


async def test_a_helpers_request_pressed_in_its_parents_chat_resumes_the_helper_on_its_stream(
    world: World,
) -> None:
    """A helper's request, shown in its parent's Telegram chat: the decision resumes the helper
    where it answers (its own stream), never in the chat."""
    helper = "tg:100:helper-toolu_1"
    calls = [CallSummary(call_id="c1", name="launch", arguments={"target": "moon"})]
    record = await world.confirmations.create(helper, "helper:toolu_1", ANN.id, calls, ttl=60)
    shown = await world.confirmations.show_in(record.id, "telegram", "launch it")
    assert shown is not None and shown.prompt_platform == "telegram"
    await world.press(shown, "approve", ANN)
    (queued,) = await world.mailbox.peek(helper)
    assert (queued.platform, queued.reply_to, queued.approve) == ("http", {}, True)


async def test_an_admin_who_decides_only_their_own_is_refused_another_s(world: World) -> None:
    record = await world.ask()
    press = Press(record.id, "approve", ADMIN, "http", own_only=True)
    claimed = await claim(press, world.confirmations)
    assert claimed.outcome == "forbidden" and claimed.confirmation is not None
    current = await world.confirmations.get(record.id)
    assert current is not None and current.status == "pending"
    assert await world.queued() == []


async def test_a_claim_on_a_request_that_is_gone_is_unknown(world: World) -> None:
    press = Press("nope", "approve", ANN, "http", own_only=True)
    assert (await claim(press, world.confirmations)).outcome == "unknown"
