"""Days' digests on real databases and a real Redis, written by the fake model through the
real SDK: one per scope and day, from that day's record alone and within its cap, searchable
by its words, off where a scope says so, and deleted with its scope and its sessions."""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from redis.asyncio import Redis
from sqlalchemy import func, select

from bot.config.settings import ConfigError, Settings
from bot.llm.retry import RetryPolicy
from bot.llm.router import ModelRouter
from bot.llm.served import Served
from bot.memory.digest import NOTHING, OUTPUT_TOKENS, DailyDigests, Writer, digest_model
from bot.memory.recall import Recall
from bot.store.archive import Archive
from bot.store.database import Database
from bot.store.digests import Digests
from bot.store.history import RunRecord, SessionInfo
from bot.store.memory import SOURCES, VECTORS
from bot.store.people import People
from bot.vocabulary.messages import Message, TextBlock
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage
from tests.agent.conftest import make_settings
from tests.fakes.llm import Fail, FakeLLM, Reply

ZONE = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 12, 7, 9, 30, tzinfo=ZONE)  # a Monday morning
SUNDAY, SATURDAY = date(2026, 12, 6), date(2026, 12, 5)
ANN, BOB = "tg:1", "tg:2"
GROUP = "tg:-100500"


async def said(
    db: Database, session: str, sender: str, lines: list[tuple[str, str]], at: datetime,
    kind: str = "private",
) -> None:  # fmt: skip
    """A run in `session` at `at`: `sender`'s messages and the answers, a second apart."""
    state = SessionState()
    for index, (question, answer) in enumerate(lines):
        when = at.timestamp() + 2 * index
        state.messages.append(Message(role="user", content=[TextBlock(text=question)], at=when))
        state.messages.append(
            Message(role="assistant", content=[TextBlock(text=answer)], at=when + 1)
        )
    record = RunRecord(
        SessionInfo(session, "tg", kind), [f"{session}-{at.timestamp()}"], "message", sender,
        "claude-test", "end_turn", 1, Usage(), time.time(), time.time(),
    )  # fmt: skip
    await db.history.record(state, record)


def digesting(db: Database, redis: Redis, fake: FakeLLM, max_tokens: int = 8000) -> DailyDigests:
    settings = make_settings(fake, "anthropic")
    provider = ModelRouter(Served.of(settings))
    writer = Writer(provider, RetryPolicy(attempts=1), "claude-test", max_tokens, ZONE)
    return DailyDigests(Digests(db.engine), Recall.on(db.engine), People(db.engine), writer, redis)


def asked(fake: FakeLLM) -> list[str]:
    """What each request to the model gave it to digest."""
    return [
        request.body["messages"][0]["content"][0]["text"]
        for request in fake.requests
        if request.path.endswith("/messages")
    ]


@pytest.fixture
async def yesterday(db: Database) -> None:
    """Ann wrote privately on Sunday and Saturday, Bob in a group on Sunday."""
    sunday = datetime.combine(SUNDAY, datetime.min.time(), ZONE) + timedelta(hours=20)
    await said(db, ANN, ANN, [("My sister Jo lands Friday at 18:40", "Noted.")], sunday)
    await said(db, ANN, ANN, [("I booked the dentist", "Good.")], sunday - timedelta(days=1))
    await said(db, GROUP, BOB, [("Let's meet at the lake on Saturday", "Sounds fun.")], sunday,
               "group")  # fmt: skip
    # a replay of Ann's message in the lab (`bot.lab`): not what she said that day
    await said(db, "lab:" + "e" * 32 + ":0", ANN, [("Replayed words", "Replayed answer")], sunday)
    # today's and two days before yesterday's: not digested
    await said(db, ANN, ANN, [("Today's question", "Today's answer")], NOW - timedelta(hours=1))
    await said(db, ANN, ANN, [("Old news", "Old answer")], sunday - timedelta(days=3))


async def test_each_scope_gets_one_digest_a_day_from_that_day_alone(
    db: Database, redis_client: Redis, fake_llm: FakeLLM, yesterday: None
) -> None:
    fake_llm.enqueue(  # yesterday's scopes in their order, then the day before's
        Reply("Bob proposed the lake."), Reply("Ann's sister Jo lands Friday at 18:40."),
        Reply("Ann booked the dentist."),
    )  # fmt: skip
    digests = digesting(db, redis_client, fake_llm)
    assert await digests.write_due(NOW) == 3
    records = asked(fake_llm)
    assert [("Jo lands" in r, "lake" in r, "dentist" in r) for r in records] == [
        (False, True, False), (True, False, False), (False, False, True),
    ]  # fmt: skip
    assert not any("Today's" in r or "Old news" in r or "Replayed" in r for r in records)
    assert "[20:00] tg:1: My sister Jo lands Friday at 18:40" in records[1]
    assert "2026-12-06" in records[1]

    recall = Recall.on(db.engine)
    [kept] = await recall.memories.search(ANN, "sister Jo", 5)
    assert (kept.text, kept.day) == ("2026-12-06: Ann's sister Jo lands Friday at 18:40.", SUNDAY)
    group = await recall.memories.all(f"chat:{GROUP}")
    assert [m.text for m in group] == ["2026-12-06: Bob proposed the lake."]
    # nothing of the group's day reaches Ann's scope, nor hers the group's
    assert all("lake" not in m.text for m in await recall.memories.all(ANN))

    # a later pass, another worker's too, writes none again
    again = digesting(db, redis_client, fake_llm)
    assert await again.write_due(NOW) == 0
    await redis_client.flushdb()  # even without the claims, the days are written
    assert await again.write_due(NOW) == 0
    assert len(asked(fake_llm)) == 3


async def test_a_persons_days_are_those_of_their_own_time_zone(
    db: Database, redis_client: Redis, fake_llm: FakeLLM, yesterday: None
) -> None:
    """Ann lives in Auckland (12 hours ahead of Berlin): her Sunday evening in Berlin was
    Monday morning there, a day not over yet; her Saturday evening was her Sunday."""
    await People(db.engine).set_timezone(ANN, ZoneInfo("Pacific/Auckland"))
    fake_llm.enqueue(Reply("Bob proposed the lake."), Reply("Ann booked the dentist."))
    assert await digesting(db, redis_client, fake_llm).write_due(NOW) == 2
    records = asked(fake_llm)
    assert "lake" in records[0] and "times in Europe/Berlin" in records[0]
    assert "dentist" in records[1] and "Jo lands" not in records[1]
    assert "Sunday 2026-12-06, times in Pacific/Auckland" in records[1]
    assert "[08:00] tg:1: I booked the dentist" in records[1]
    [kept] = await Recall.on(db.engine).memories.all(ANN)
    assert (kept.day, kept.text) == (SUNDAY, "2026-12-06: Ann booked the dentist.")


async def test_a_day_is_read_within_the_cap_from_its_latest_messages(
    db: Database, redis_client: Redis, fake_llm: FakeLLM
) -> None:
    start = datetime.combine(SUNDAY, datetime.min.time(), ZONE) + timedelta(hours=8)
    lines = [(f"Message {n}: " + "words " * 60, f"Answer {n}") for n in range(80)]
    await said(db, ANN, ANN, lines, start)
    fake_llm.enqueue(Reply("A long day."))
    cap = 2000
    assert await digesting(db, redis_client, fake_llm, cap).write_due(NOW) == 1
    [request] = [r for r in fake_llm.requests if r.path.endswith("/messages")]
    sent = request.body["system"][0]["text"] + request.body["messages"][0]["content"][0]["text"]
    assert len(sent) // 4 + request.body["max_tokens"] <= cap
    assert request.body["max_tokens"] == OUTPUT_TOKENS
    text = request.body["messages"][0]["content"][0]["text"]
    assert "Message 79" in text and "Message 0:" not in text
    assert "messages are left out" in text


async def test_nothing_worth_keeping_and_a_failing_model_write_nothing_and_loop_not(
    db: Database, redis_client: Redis, fake_llm: FakeLLM, yesterday: None
) -> None:
    fake_llm.enqueue(Reply(NOTHING), Fail(500), Fail(500))
    digests = digesting(db, redis_client, fake_llm)
    assert await digests.write_due(NOW) == 0
    assert len(asked(fake_llm)) == 3
    assert await Recall.on(db.engine).memories.count(ANN) == 0
    # the next pass asks nobody again: the failed ones wait an hour, the empty one is done
    assert await digests.write_due(NOW) == 0
    assert len(asked(fake_llm)) == 3
    ttls = [await redis_client.ttl(key) async for key in redis_client.scan_iter("parley:digest:*")]
    assert sorted(ttl <= 3600 for ttl in ttls) == [False, True, True]


async def test_a_scope_turned_off_is_not_digested(
    db: Database, redis_client: Redis, fake_llm: FakeLLM, yesterday: None
) -> None:
    await Digests(db.engine).switch(ANN, on=False, by=ANN)
    fake_llm.enqueue(Reply("Bob proposed the lake."))
    assert await digesting(db, redis_client, fake_llm).write_due(NOW) == 1
    assert await Recall.on(db.engine).memories.count(ANN) == 0
    await Digests(db.engine).switch(ANN, on=True, by=ANN)
    assert await Digests(db.engine).off([ANN, f"chat:{GROUP}"]) == set()


async def test_digests_go_with_their_scope_their_sessions_and_retention(
    db: Database, redis_client: Redis, fake_llm: FakeLLM, yesterday: None
) -> None:
    fake_llm.enqueue(Reply("The lake."), Reply("Jo lands Friday."), Reply("The dentist."))
    await digesting(db, redis_client, fake_llm).write_due(NOW)
    memories = Recall.on(db.engine).memories
    await memories.add(ANN, "Ann likes tea")
    assert await memories.count(ANN) == 3
    archive = Archive(db.engine)
    assert (await archive.delete(GROUP)).existed
    assert await memories.all(f"chat:{GROUP}") == []
    assert await memories.count(ANN) == 3  # another session's deletion leaves hers
    pruned = await archive.prune(datetime.combine(SUNDAY, datetime.min.time(), UTC))
    assert pruned.digests == 1  # Saturday's
    assert [m.day for m in await memories.all(ANN)] == [SUNDAY, None]
    assert await memories.forget_all(ANN) == 2
    async with db.engine.connect() as connection:
        for table in (SOURCES, VECTORS):
            assert (await connection.execute(select(func.count()).select_from(table))).scalar() == 0


def test_the_digest_model_is_the_default_unless_set_and_a_bad_one_is_one_line() -> None:
    def model(**values: Any) -> str | None:
        settings = Settings(_env_file=None, model="claude-test", anthropic_api_key="k", **values)
        return digest_model(settings, Served.of(settings))

    assert model() == "claude-test"
    assert model(digest_model="off") is None
    assert model(digest_model="claude-haiku-4-5") == "claude-haiku-4-5"
    with pytest.raises(ConfigError, match=r"^PARLEY_DIGEST_MODEL: 'gpt-4o' is not a model"):
        model(digest_model="gpt-4o", models=["claude-test"])
