"""Retention in live contexts (`bot.session.retention`): an active session's context, its
recent turns in Redis and its older ones in SQL, loses what was said before the window, cut
where a turn starts, and only while nothing runs or waits in the session."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from typing import Any

import pytest
from arq.constants import default_queue_name
from sqlalchemy import select

from bot.redis import keys
from bot.redis.results import done
from bot.session.retention import ContextRetention, cut_point
from bot.session.runner import SessionRunner
from bot.session.states import StateStore
from bot.store.cold_context import CONTEXT, ColdContext
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from bot.vocabulary.state import (
    ContextMark,
    PendingConfirmation,
    SessionState,
    TurnProgress,
)
from tests.fakes.llm import FakeLLM, Reply
from tests.fakes.llm.script import RecordedRequest
from tests.support.runner import Rig, runner_rig
from tests.support.waiting import until

PADDING = "lorem ipsum dolor sit amet " * 60  # some 1.6 KB a message
NOW = time.time()
OLD = NOW - 40 * 86_400  # before the window of these tests
WINDOW = NOW - 30 * 86_400


def user(text: str, at: float, **fields: Any) -> Message:
    return Message(role="user", content=[TextBlock(text=text)], at=at, **fields)


def answer(text: str, at: float) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)], at=at)


def call(name: str, at: float) -> list[Message]:
    """A tool call and its result."""
    return [
        Message(role="assistant", content=[ToolUseBlock(id=name, name="clock")], at=at),
        Message(role="user", content=[ToolResultBlock(tool_use_id=name, content="12:00")], at=at),
    ]


def texts_of(messages: list[Message]) -> list[str]:
    return [m.text or m.content[0].type for m in messages]


def test_the_cut_ends_where_the_first_turn_after_the_old_messages_starts() -> None:
    """A turn that began before the window goes whole, its tool call with its result, even
    when its end was said after; the summary at the head goes with the first turns."""
    summary = user("Summary of older turns", OLD, summary=True)
    old = [user("old question", OLD), *call("a", OLD), answer("old answer", OLD)]
    straddling = [user("asked before", OLD), *call("b", NOW), answer("answered since", NOW)]
    new = [user("new question", NOW), answer("new answer", NOW)]
    context = [summary, *old, *straddling, *new]
    assert texts_of(context[cut_point(context, WINDOW) :]) == ["new question", "new answer"]
    assert cut_point(new, WINDOW) == 0
    assert cut_point(context[:-2], WINDOW) == len(context) - 2  # all of it: all is old


def test_a_summary_dated_when_written_goes_with_the_older_turns_it_leads() -> None:
    """A summary written before summaries were dated by what they fold looks new, but it
    stands for turns older still than those it leads: the cut takes it with them."""
    context = [
        user("Summary", NOW, summary=True),
        user("old question", OLD),
        answer("old answer", OLD),
        user("new question", NOW),
        answer("new answer", NOW),
    ]
    assert texts_of(context[cut_point(context, WINDOW) :]) == ["new question", "new answer"]


def test_a_limit_keeps_a_turn_in_flight_and_cuts_what_it_may() -> None:
    context = [user("q1", OLD), answer("a1", OLD), user("q2", OLD), *call("c", OLD)]
    assert cut_point(context, WINDOW, limit=2) == 2
    assert cut_point(context, WINDOW, limit=0) == 0


def brain(request: RecordedRequest) -> Reply:
    asked = request.last_user_text().split("]")[-1].strip()[:14]
    return Reply(text=f"Answer to {asked}: {PADDING}", chunk_size=500)


async def turn(rig: Rig, runner: SessionRunner, session: str, n: int) -> dict[str, Any]:
    """One long question answered; the body of the model call that answered it."""
    text = f"Question {n:03d}. {PADDING}"
    envelope = Envelope(id=f"{session}:{n}", session=session, text=text, sender=Sender(id="u"))
    await rig.mailbox.submit(envelope)
    await runner.take_turns(session)
    return rig.fake.requests[-1].body


def retention(rig: Rig) -> ContextRetention:
    return ContextRetention(rig.mailbox, ColdContext(rig.database.engine), lease_ttl=30)


async def kept(rig: Rig, session: str) -> str:
    """What the session's context holds, in Redis and in SQL."""
    redis = rig.mailbox.redis
    recent = await done(redis.lrange(keys.session(session, "context"), 0, -1))
    rows = select(CONTEXT.c.body).where(CONTEXT.c.session_key == session)
    async with rig.database.engine.connect() as db:
        older = list((await db.execute(rows)).scalars())
    return "\n".join([*older, *(item.decode() for item in recent)])


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
async def test_a_long_conversation_loses_its_turns_from_before_the_window(
    redis_url: str, database_url: str, fake_llm: FakeLLM
) -> None:
    """Default settings, the real runner: 30 turns, most of them moved to SQL; the first 20
    are said before the window. They go from Redis and SQL alike, and the next turn (by the
    worker that kept the last state warm) sends the model the 10 since and itself."""
    fake_llm.responder = brain
    async with runner_rig(redis_url, database_url, fake_llm) as rig:
        session = "http:long"
        for n in range(20):
            await turn(rig, rig.runner, session, n)
        window = time.time()
        for n in range(20, 30):
            await turn(rig, rig.runner, session, n)
        assert "Question 000." in await kept(rig, session)
        assert await retention(rig).cut(session, window) == 2 * 20
        left = await kept(rig, session)
        assert "Question 019." not in left and "Question 020." in left
        sent = (await turn(rig, rig.runner, session, 30))["messages"]
        assert len(sent) == 2 * 10 + 1
        assert "Question 020." in json.dumps(sent[0])
        assert "Question 019." not in json.dumps(sent)
        assert await retention(rig).cut(session, window) == 0  # nothing left that old


async def saved(rig: Rig, session: str, state: SessionState) -> None:
    token = await rig.mailbox.take_lease(session, ttl=30)
    assert token is not None
    await rig.runner.states.save(session, token, state)
    await rig.mailbox.release(session, token)


async def loaded(rig: Rig, session: str) -> list[str]:
    state = await StateStore(rig.mailbox, ColdContext(rig.database.engine)).load(session)
    assert state is not None
    return texts_of(state.messages)


async def test_nothing_is_cut_while_a_message_waits_or_a_turn_runs(rig: Rig) -> None:
    session = "http:busy"
    context = [user("old question", OLD), answer("old answer", OLD), user("new", NOW)]
    await saved(rig, session, SessionState(messages=context))
    waiting = Envelope(id="e1", session=session, text="hello", sender=Sender(id="u"))
    await rig.mailbox.submit(waiting)
    assert await retention(rig).cut(session, WINDOW) == 0  # a message waits
    token = await rig.mailbox.take_lease(session, ttl=30)
    assert token is not None
    await rig.mailbox.commit(session, token, [waiting])  # taken up: a turn runs
    assert await retention(rig).cut(session, WINDOW) == 0
    assert await loaded(rig, session) == ["old question", "old answer", "new"]
    assert await rig.mailbox.release_if_empty(session, token) is True
    assert await retention(rig).cut(session, WINDOW) == 2
    assert await loaded(rig, session) == ["new"]
    assert not await rig.mailbox.busy(session)


async def test_a_turn_waiting_for_a_decision_keeps_its_messages(rig: Rig) -> None:
    """Its question, its call and the confirmation it waits for stay, though all were said
    before the window; the turns before it go."""
    session = "http:deciding"
    question = user("please delete it", OLD)
    asked = Message(role="assistant", content=[ToolUseBlock(id="t1", name="delete")], at=OLD)
    state = SessionState(
        messages=[user("older", OLD), answer("older answer", OLD), question, asked],
        turn=TurnProgress(start=ContextMark(message=question.id, blocks=0)),
        pending=PendingConfirmation(calls=asked.tool_uses, waiting=["t1"]),
    )
    await saved(rig, session, state)
    assert await retention(rig).cut(session, WINDOW) == 2
    assert await loaded(rig, session) == ["please delete it", "tool_use"]


async def test_a_message_that_comes_during_the_cut_is_handed_on(
    rig: Rig, database_url: str
) -> None:
    """The cut holds the lease while it writes; a message submitted meanwhile finds it held
    (its drain job ends), so the cut wakes the session again as it lets go."""
    session = "http:arriving"
    context = [m for n in range(40) for m in (user(f"q{n} {PADDING}", OLD), answer("a", OLD))]
    context += [m for n in range(30) for m in (user(f"q{n} {PADDING}", NOW), answer("a", NOW))]
    await saved(rig, session, SessionState(messages=context))
    redis = rig.mailbox.redis
    writer = sqlite3.connect(database_url.removeprefix("sqlite+aiosqlite:///"))
    writer.execute("BEGIN IMMEDIATE")  # the cut's move of the turns kept to SQL waits
    try:
        cutting = asyncio.create_task(retention(rig).cut(session, WINDOW))
        await until(lambda: rig.mailbox.busy(session), "the cut holding the lease")
        queued = await redis.zcard(default_queue_name)
        await rig.mailbox.submit(
            Envelope(id="e1", session=session, text="hi", sender=Sender(id="u"))
        )
        assert await redis.zcard(default_queue_name) == queued + 1
    finally:
        writer.rollback()
        writer.close()
    assert await cutting == 2 * 40
    assert not await rig.mailbox.busy(session)
    assert await redis.zcard(default_queue_name) == queued + 2  # woken again
    assert [e.id for e in await rig.mailbox.peek(session, 5)] == ["e1"]
