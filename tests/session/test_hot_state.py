"""A long session's hot state in Redis stays under 64 KiB, while the model is sent the whole
context: the older turns are read back from SQL by a worker that loads the session cold, as
the very bytes a warm worker sends, also after compaction (`bot.session.states`). (A worker
killed mid-reply, its session finished cold by another: tests/integration/worker/
test_cold_takeover.py.)"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from sqlalchemy import delete, select

from bot.agent.compaction import SUMMARISER
from bot.config.settings import Settings
from bot.mailbox.inbox import LeaseLost, Mailbox
from bot.redis import keys
from bot.redis.results import done
from bot.session.runner import SessionRunner
from bot.session.states import StateStore
from bot.store.cold_context import CONTEXT, ColdContext
from bot.store.database import open_database
from bot.store.engine import make_engine
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.messages import Message, TextBlock
from bot.vocabulary.state import SessionState
from tests.fakes.llm import FakeLLM, Reply
from tests.fakes.llm.script import RecordedRequest
from tests.support.runner import Rig, runner_rig

KIB = 1024
LIMIT = 64 * KIB
STATE_KEYS = ("state", "context", "saved")
PADDING = "lorem ipsum dolor sit amet " * 60  # some 1.6 KB a message


def brain(request: RecordedRequest) -> Reply:
    """A long answer that depends only on the question, and a summary when asked for one."""
    if request.system_text().startswith(SUMMARISER):
        return Reply(text="The person asked numbered questions.", chunk_size=500)
    asked = request.last_user_text().split("]")[-1].strip()[:40]
    return Reply(text=f"Answer to {asked}: {PADDING}", chunk_size=500)


@pytest.fixture
async def rig(redis_url: str, database_url: str, fake_llm: FakeLLM) -> AsyncIterator[Rig]:
    fake_llm.responder = brain
    async with runner_rig(redis_url, database_url, fake_llm) as made:
        yield made


def fixed_clock(rig: Rig) -> None:
    """Every turn's time stamp the same, so two sessions told the same see the same bytes."""
    agent = rig.runner.deps.agent
    at = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    agent.deps = dataclasses.replace(agent.deps, clock=lambda: at)


async def hot_bytes(redis: Redis, session: str) -> int:
    """The session's state in Redis, as MEMORY USAGE counts it."""
    sizes = [await redis.memory_usage(keys.session(session, n), samples=0) for n in STATE_KEYS]
    return sum(int(size or 0) for size in sizes)


async def turn(rig: Rig, runner: SessionRunner, session: str, n: int) -> dict[str, Any]:
    """One long question answered; the body of the model call that answered it."""
    text = f"Question {n:03d}. {PADDING}"
    envelope = Envelope(id=f"{session}:{n}", session=session, text=text, sender=Sender(id="u"))
    await rig.mailbox.submit(envelope)
    await runner.take_turns(session)
    assert await rig.mailbox.pending(session) == 0
    return rig.fake.requests[-1].body


def messages_of(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"], sort_keys=True)


async def test_a_long_conversation_keeps_its_hot_state_under_64_kib(rig: Rig) -> None:
    """Default settings: 80 turns of some 3.2 KB each, 250 KB of context by the end, all of
    it sent to the model, and Redis never holds more than 64 KiB of the session's state."""
    session, redis = "http:long", rig.mailbox.redis
    largest = 0
    for n in range(80):
        body = await turn(rig, rig.runner, session, n)
        largest = max(largest, await hot_bytes(redis, session))
    assert len(body["messages"]) == 2 * 80 - 1
    assert "Question 000." in json.dumps(body["messages"][0])
    assert len(json.dumps(body["messages"])) > 4 * LIMIT
    assert largest < LIMIT, largest


async def test_a_cold_load_sends_what_a_warm_worker_sends(rig: Rig) -> None:
    """Two sessions told the same: one's worker kept its copy, the other's last turn is taken
    by a worker that never saw it, whose context comes from Redis's recent turns and SQL's
    older ones. The model is sent the same messages, byte for byte."""
    fixed_clock(rig)
    warm, cold = "http:warm", "http:cold"
    for n in range(40):
        await turn(rig, rig.runner, warm, n)
        await turn(rig, rig.runner, cold, n)
    items = await done(rig.mailbox.redis.llen(keys.session(cold, "context")))
    assert items < 2 * 40 // 2  # most of the context is not in Redis
    expected = messages_of(await turn(rig, rig.runner, warm, 40))
    fresh = SessionRunner(rig.runner.deps)  # another worker: no copy kept
    assert messages_of(await turn(rig, fresh, cold, 40)) == expected
    # and the worker that now has the session goes on warm, as it would have
    assert messages_of(await turn(rig, fresh, cold, 41)) == messages_of(
        await turn(rig, rig.runner, warm, 41)
    )


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
async def test_a_cold_load_after_compaction_sends_what_a_warm_worker_sends(
    redis_url: str, database_url: str, fake_llm: FakeLLM
) -> None:
    """A window small enough that the context is compacted after part of it moved to SQL:
    the cold load rebuilds the compacted context (the summary and the turns kept), not the
    history, and the replaced context's rows are gone from SQL."""
    fake_llm.responder = brain
    async with runner_rig(redis_url, database_url, fake_llm, context_window=24_000) as rig:
        fixed_clock(rig)
        warm, cold = "http:warm", "http:cold"
        seen: set[str] = set()  # the contexts of which SQL held older messages
        for n in range(30):
            await turn(rig, rig.runner, warm, n)
            await turn(rig, rig.runner, cold, n)
            seen |= await epochs(rig, cold)
        summaries = [r for r in fake_llm.requests if r.system_text().startswith(SUMMARISER)]
        assert len(summaries) >= 2  # compacted, in each session
        assert seen - await epochs(rig, cold)  # a context moved in part, then replaced
        expected = messages_of(await turn(rig, rig.runner, warm, 30))
        assert "Summary of the earlier conversation" in expected
        fresh = SessionRunner(rig.runner.deps)
        assert messages_of(await turn(rig, fresh, cold, 30)) == expected
        assert await hot_bytes(rig.mailbox.redis, cold) < LIMIT
        assert len(await epochs(rig, cold)) <= 1  # the replaced contexts' rows are gone


async def epochs(rig: Rig, session: str) -> set[str]:
    """The contexts of `session` of which SQL holds older messages."""
    query = select(CONTEXT.c.epoch).where(CONTEXT.c.session_key == session)
    async with rig.database.engine.connect() as db:
        return set((await db.execute(query)).scalars())


class _NoJobs:
    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> None:
        return None


def said(n: int, who: str) -> list[Message]:
    """A question and its answer, some 3.2 KB together."""
    return [
        Message(role="user", content=[TextBlock(text=f"{who} asks {n}. {PADDING}")]),
        Message(role="assistant", content=[TextBlock(text=f"{who} is told {n}. {PADDING}")]),
    ]


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
async def test_a_worker_that_lost_the_session_between_sql_and_redis_changes_nothing(
    redis_client: Redis, database_url: str
) -> None:
    """The older turns go to SQL first, then Redis trims them under the lease. A worker that
    stops in between (it died, or was paused and lost its lease) leaves the state as its
    last save wrote it: nothing lost, nothing twice; and its rows, written late, never
    overwrite those of the worker that took the session over."""
    database = await open_database(Settings(_env_file=None, database_url=database_url))
    mailbox, session = Mailbox(redis_client, _NoJobs()), "test:handover"
    cold = ColdContext(database.engine)
    try:
        first = await mailbox.take_lease(session, ttl=30)
        assert first is not None
        mine, state = StateStore(mailbox, cold), SessionState()
        for n in range(40):
            state.messages += said(n, "ann")
            await mine.save(session, first, state)
        saved = state.model_dump()
        await done(redis_client.delete(keys.session(session, "lease")))  # swept: it stalled
        second = await mailbox.take_lease(session, ttl=30)
        assert second is not None
        for n in range(40, 50):
            state.messages += said(n, "ann")
        with pytest.raises(LeaseLost):  # its older turns went to SQL, then Redis refused
            await mine.save(session, first, state)
        theirs = StateStore(mailbox, cold)
        loaded = await theirs.load(session)
        assert loaded is not None and loaded.model_dump() == saved
        for n in range(40, 60):
            loaded.messages += said(n, "bob")
        await theirs.save(session, second, loaded)
        with pytest.raises(LeaseLost):
            await mine.save(session, first, state)  # late again, over the successor's rows
        again = await StateStore(mailbox, cold).load(session)
        assert again is not None and again.model_dump() == loaded.model_dump()
        assert await done(redis_client.llen(keys.session(session, "context"))) < len(
            loaded.messages
        )
    finally:
        await database.aclose()


async def test_a_database_that_refuses_the_move_leaves_the_context_in_redis(
    redis_client: Redis, tmp_path: Path
) -> None:
    """Nothing is lost while the database is away: the saves go on, Redis keeps it all."""
    engine = make_engine(f"sqlite+aiosqlite:///{tmp_path}/gone/parley.db")  # no such folder
    mailbox, session = Mailbox(redis_client, _NoJobs()), "test:away"
    try:
        token = await mailbox.take_lease(session, ttl=30)
        assert token is not None
        store, state = StateStore(mailbox, ColdContext(engine)), SessionState()
        for n in range(40):
            state.messages += said(n, "ann")
            await store.save(session, token, state)
        loaded = await StateStore(mailbox, ColdContext(engine)).load(session)
        assert loaded is not None and loaded.model_dump() == state.model_dump()
        assert await done(redis_client.llen(keys.session(session, "context"))) == 80
    finally:
        await engine.dispose()


async def test_older_messages_gone_for_good_leave_the_session_its_recent_turns(
    redis_client: Redis, database_url: str
) -> None:
    """A database restored from an older backup lacks the rows Redis names: the session goes
    on with the turns Redis has, rather than failing every message from then on."""
    database = await open_database(Settings(_env_file=None, database_url=database_url))
    mailbox, session = Mailbox(redis_client, _NoJobs()), "test:restored"
    cold = ColdContext(database.engine)
    try:
        token = await mailbox.take_lease(session, ttl=30)
        assert token is not None
        store, state = StateStore(mailbox, cold), SessionState()
        for n in range(40):
            state.messages += said(n, "ann")
            await store.save(session, token, state)
        async with database.engine.begin() as db:
            await db.execute(delete(CONTEXT))
        loaded = await StateStore(mailbox, cold).load(session)
        assert loaded is not None and 0 < len(loaded.messages) < 80
        assert loaded.messages[0].starts_turn
        assert [m.id for m in loaded.messages] == [
            m.id for m in state.messages[-len(loaded.messages) :]
        ]
        loaded.messages += said(40, "ann")
        await StateStore(mailbox, cold).save(session, token, loaded)
        again = await StateStore(mailbox, cold).load(session)
        assert again is not None and again.model_dump() == loaded.model_dump()
    finally:
        await database.aclose()


async def test_a_deleted_session_takes_the_older_part_of_its_context_with_it(rig: Rig) -> None:
    """Deleting a session (and retention's deleting an idle one) deletes its rows in SQL,
    the older messages of its context among them."""
    session = "http:forgotten"
    for n in range(30):
        await turn(rig, rig.runner, session, n)
    assert await epochs(rig, session)
    assert (await rig.database.archive.delete(session)).existed
    assert not await epochs(rig, session)
