"""The session runner and the record in one process: a real mailbox in Redis, the agent against the
fake model, SQLite; the crash windows are set up by hand where a kill could not hit them
reliably."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from bot.mailbox.inbox import Head
from bot.redis import keys
from bot.redis.results import done
from bot.store.history import RUNS
from bot.vocabulary.envelope import Envelope, Sender
from tests.fakes.llm import FakeLLM, Reply
from tests.support.calls import watch
from tests.support.runner import Rig, runner_rig

SESSION = "http:drain"


def said(text: str, n: int) -> Envelope:
    return Envelope(id=f"m{n}", session=SESSION, text=text, sender=Sender(id="http:ann"))


async def test_a_run_saved_but_not_committed_is_not_answered_again(rig: Rig) -> None:
    rig.fake.enqueue(Reply(text="Hello Ann."))
    envelope = said("hi, I am Ann", 1)
    await rig.mailbox.submit(envelope)
    await rig.runner.take_turns(SESSION)
    # The worker died after the run's last save and before its commit: the envelope is
    # still at the head of the inbox, the state says the run finished.
    await done(rig.mailbox.redis.rpush(keys.session(SESSION, "inbox"), envelope.model_dump_json()))
    await rig.runner.take_turns(SESSION)
    assert len(rig.fake.requests) == 1
    assert await rig.mailbox.pending(SESSION) == 0
    info = await rig.database.archive.session(SESSION)
    assert info is not None and (info.messages, info.runs) == (2, 1)


async def test_a_lost_hot_state_is_rebuilt_from_the_record(rig: Rig) -> None:
    rig.fake.enqueue(Reply(text="Noted."), Reply(text="You are Ann."))
    await rig.mailbox.submit(said("I am Ann", 1))
    await rig.runner.take_turns(SESSION)
    await rig.mailbox.redis.delete(keys.session(SESSION, "state"))
    await rig.mailbox.submit(said("who am I?", 2))
    await rig.runner.take_turns(SESSION)
    sent = rig.fake.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert "I am Ann" in str(sent[0]) and "Noted." in str(sent[1])
    info = await rig.database.archive.session(SESSION)
    assert info is not None and (info.messages, info.runs) == (4, 2)


async def test_a_record_missed_while_the_database_was_away_is_caught_up(rig: Rig) -> None:
    rig.fake.enqueue(Reply(text="one"), Reply(text="two"))
    history = rig.runner.deps.history
    working = history.engine
    history.engine = _broken_engine()
    await rig.mailbox.submit(said("first", 1))
    await rig.runner.take_turns(SESSION)  # answered; recording it failed and was logged
    history.engine = working
    await rig.mailbox.submit(said("second", 2))
    await rig.runner.take_turns(SESSION)
    assert len(rig.fake.requests) == 2
    info = await rig.database.archive.session(SESSION, recent=10)
    assert info is not None
    assert [m.text.split("\n")[-1] for m in info.recent] == ["first", "one", "second", "two"]
    assert info.runs == 2 and len({m.run_id for m in info.recent}) == 2


async def test_a_run_missed_while_the_file_was_read_only_is_caught_up(rig: Rig) -> None:
    rig.fake.enqueue(Reply(text="one"), Reply(text="two"))
    history = rig.runner.deps.history
    working = history.engine
    path = working.url.database
    # SQLite opens the same file read-only: every write fails, also for root
    history.engine = create_async_engine(f"sqlite+aiosqlite:///file:{path}?mode=ro&uri=true")
    await rig.mailbox.submit(said("first", 1))
    await rig.runner.take_turns(SESSION)  # answered; recording it failed and was logged
    await history.engine.dispose()
    history.engine = working
    await rig.mailbox.submit(said("second", 2))
    await rig.runner.take_turns(SESSION)
    async with working.connect() as db:
        runs = (await db.execute(select(RUNS).order_by(RUNS.c.started_at))).all()
    info = await rig.database.archive.session(SESSION, recent=10)
    assert info is not None
    assert [r.envelope_ids for r in runs] == [["m1"], ["m2"]]
    assert (info.runs, info.messages) == (2, 4)
    assert [m.run_id for m in info.recent] == [runs[0].id] * 2 + [runs[1].id] * 2
    for name in ("input", "output", "cache_read", "cache_write"):
        by_runs = sum(getattr(r, f"{name}_tokens") for r in runs)
        by_messages = sum(getattr(m.usage, name) for m in info.recent if m.usage)
        assert getattr(info.usage, name) == by_runs == by_messages
    assert info.usage.output > 0 and info.usage.input + info.usage.cache_write > 0


def _broken_engine() -> AsyncEngine:
    """A database that is not there (nothing listens on port 1)."""
    return create_async_engine("postgresql+asyncpg://nobody@127.0.0.1:1/none")


async def test_a_turns_options_come_with_its_state_and_its_reads_in_one_statement(
    redis_url: str, database_url: str, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the turn is set up with comes from Redis (the chat's mode and reasoning, the
    session's model: read in the same call as the state) and SQL (the person's
    preferences, among the rest of what the database says: one statement); its first event
    waits for them."""
    seen: list[str] = []

    async with runner_rig(redis_url, database_url, fake_llm, services=True) as rig:
        await rig.mailbox.set_option(SESSION, "model", "claude-chosen")
        watch(monkeypatch, seen, rig.stores.reads, "read")
        watch(monkeypatch, seen, rig.mailbox, "load_for_turn")
        for name in ("load_state", "option", "options"):
            watch(monkeypatch, seen, rig.mailbox, name)
        rig.fake.enqueue(Reply(text="Hello Ann."))
        await rig.mailbox.submit(said("hi, I am Ann", 1))
        await rig.runner.take_turns(SESSION)
        assert [r.body["model"] for r in rig.fake.requests] == ["claude-chosen"]
    assert seen == [
        "load_for_turn asked", "load_for_turn answered", "read asked", "read answered"
    ]  # fmt: skip


async def test_a_heartbeat_due_while_the_lease_is_let_go_stops_nothing(
    redis_url: str,
    database_url: str,
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The runner lets the lease go once the inbox is empty; a heartbeat that extends it
    just after finds it gone. That is no lost lease: the runner ends as it meant to, and
    does not take its own release for an expiry (which stopped the task, and on a hand-over
    lost the wake-up of the next worker)."""
    async with runner_rig(redis_url, database_url, fake_llm, lease_ttl=1) as rig:
        commit = rig.mailbox.commit

        async def slow_to_return(*args: Any, **kwargs: Any) -> Head | None:
            head = await commit(*args, **kwargs)  # nothing else waits: the lease is let go
            await asyncio.sleep(1.5)  # past a heartbeat or more (every third of a second)
            return head

        monkeypatch.setattr(rig.mailbox, "commit", slow_to_return)
        rig.fake.enqueue(Reply(text="Hello."))
        await rig.mailbox.submit(said("hi", 1))
        await rig.runner.take_turns(SESSION)
        assert len(rig.fake.requests) == 1
        assert await rig.mailbox.pending(SESSION) == 0
        assert "expired during a turn" not in caplog.text
