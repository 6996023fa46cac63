"""Runs of scheduled tasks and people's time zones in the session runner: a real mailbox in
Redis, the agent against the fake model, the task book and people in SQLite."""

from __future__ import annotations

import zoneinfo
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import create_async_engine

from bot.store.history import RUNS
from bot.tasks.book import NewTask
from bot.tasks.model import Target, Task
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.schedule import parse_when
from tests.fakes.llm import FakeLLM, Reply
from tests.support.runner import Rig, runner_rig

SESSION = "http:scheduled"
ANN = Sender(id="http:ann", name="Ann")
BOB = Sender(id="http:bob", name="Bob")
OPERATOR_ZONE = "America/New_York"  # PARLEY_TIMEZONE here, unlike anyone's own


@pytest.fixture
async def rig(redis_url: str, database_url: str, fake_llm: FakeLLM) -> AsyncIterator[Rig]:
    async with runner_rig(
        redis_url, database_url, fake_llm, services=True, timezone=OPERATOR_ZONE
    ) as made:
        yield made


def said(text: str, n: int, sender: Sender = ANN) -> Envelope:
    return Envelope(id=f"m{n}", session=SESSION, text=text, sender=sender)


async def a_task(rig: Rig, prompt: str) -> Task:
    now = datetime.now(UTC)
    schedule = parse_when("every 2 hours", zoneinfo.ZoneInfo("Europe/Lisbon"), now)
    target = Target(session=SESSION, platform="http")
    return await rig.stores.tasks.add(
        NewTask(target, ANN, prompt, "every 2 hours", schedule), max_active=20, now=now
    )


async def runs(rig: Rig) -> list[tuple[str, str, list[str]]]:
    async with rig.database.engine.connect() as db:
        rows = await db.execute(
            select(RUNS.c.trigger, RUNS.c.sender, RUNS.c.envelope_ids).order_by(RUNS.c.started_at)
        )
        return [(row.trigger, row.sender, row.envelope_ids) for row in rows]


def last_user_text(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


async def test_a_scheduled_run_is_a_turn_of_its_own_recorded_as_scheduled(rig: Rig) -> None:
    task = await a_task(rig, "Remind Ann to call the bank")
    run = task.envelope(datetime.now(UTC) - timedelta(seconds=1))
    rig.fake.enqueue(Reply(text="Hello."), Reply(text="Call the bank!"), Reply(text="Sure."))
    await rig.mailbox.submit(said("hello", 1))
    await rig.mailbox.submit(run)
    await rig.mailbox.submit(said("thanks", 2))  # queued right after the run: not merged
    await rig.runner.take_turns(SESSION)
    assert len(rig.fake.requests) == 3
    texts = [last_user_text(request.body) for request in rig.fake.requests]
    assert "hello" in texts[0] and "call the bank" not in texts[0]
    assert "Remind Ann to call the bank" in texts[1] and "(Scheduled task" in texts[1]
    assert "thanks" not in texts[1] and "hello" not in texts[1]
    assert "thanks" in texts[2] and "Remind Ann" not in texts[2]
    assert await runs(rig) == [
        ("message", ANN.id, ["m1"]),
        ("scheduled", ANN.id, [run.id]),
        ("message", ANN.id, ["m2"]),
    ]
    assert await rig.mailbox.pending(SESSION) == 0


async def test_a_run_delivered_twice_is_answered_once(rig: Rig) -> None:
    task = await a_task(rig, "Summarise the day")
    run_at = datetime.now(UTC) - timedelta(seconds=1)
    rig.fake.enqueue(Reply(text="Summary."))
    await rig.mailbox.submit(task.envelope(run_at))
    await rig.mailbox.submit(task.envelope(run_at))  # a second scheduler, during a takeover
    await rig.runner.take_turns(SESSION)
    assert len(rig.fake.requests) == 1
    assert [trigger for trigger, _, _ in await runs(rig)] == ["scheduled"]


async def test_a_person_s_own_zone_is_in_their_next_turn(rig: Rig) -> None:
    rig.fake.enqueue(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    await rig.mailbox.submit(said("what time is it?", 1))
    await rig.runner.take_turns(SESSION)
    assert f"time zone {OPERATOR_ZONE}." in _system(rig.fake.requests[0].body)
    await rig.stores.people.set_timezone(ANN.id, zoneinfo.ZoneInfo("Asia/Tokyo"))
    await rig.mailbox.submit(said("and now?", 2))
    await rig.runner.take_turns(SESSION)
    assert "time zone Asia/Tokyo." in _system(rig.fake.requests[1].body)
    assert " JST]" in last_user_text(rig.fake.requests[1].body)
    await rig.mailbox.submit(said("and for me?", 3, BOB))  # Bob chose none
    await rig.runner.take_turns(SESSION)
    assert f"time zone {OPERATOR_ZONE}." in _system(rig.fake.requests[2].body)
    assert " JST]" not in last_user_text(rig.fake.requests[2].body)


async def test_a_zone_the_database_cannot_give_falls_back_to_parley_timezone(rig: Rig) -> None:
    await rig.stores.people.set_timezone(ANN.id, zoneinfo.ZoneInfo("Asia/Tokyo"))
    working = rig.stores.reads.engine
    rig.stores.reads.engine = create_async_engine("postgresql+asyncpg://nobody@127.0.0.1:1/none")
    try:
        rig.fake.enqueue(Reply(text="Still here."))
        await rig.mailbox.submit(said("hi", 1))
        await rig.runner.take_turns(SESSION)
    finally:
        await rig.stores.reads.engine.dispose()
        rig.stores.reads.engine = working
    assert len(rig.fake.requests) == 1
    assert f"time zone {OPERATOR_ZONE}." in _system(rig.fake.requests[0].body)
    assert await runs(rig) == [("message", ANN.id, ["m1"])]


def _system(body: dict[str, Any]) -> str:
    return str(body.get("system", ""))
