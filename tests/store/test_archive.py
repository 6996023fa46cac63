"""Reading the record back: pages, totals, deletion and retention."""

from __future__ import annotations

import asyncio
import time
import zoneinfo
from datetime import UTC, datetime, timedelta

import pytest
from redis.asyncio import Redis
from sqlalchemy import ColumnElement, Table, func, select, update

from bot.redis.confirmations import CallSummary, Confirmation
from bot.store.database import Database
from bot.store.history import CONFIRMATIONS, MESSAGES, RUNS, SESSIONS, RunRecord, SessionInfo
from bot.tasks.book import TASKS, NewTask, TaskBook
from bot.tasks.model import Target
from bot.vocabulary.envelope import Sender
from bot.vocabulary.messages import Message, TextBlock
from bot.vocabulary.schedule import parse_when
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage

ANN = Sender(id="tg:1", name="Ann")
LONG_AGO = datetime.now(UTC) - timedelta(days=40)
WINDOW = timedelta(days=30)


async def converse(
    db: Database, key: str, platform: str = "tg", turns: int = 1, tokens: int = 100
) -> None:
    """`turns` runs in `key`, each reading `tokens` and writing a tenth of that."""
    state = SessionState()
    for turn in range(turns):
        state.messages.append(Message(role="user", content=[TextBlock(text=f"q{turn}")]))
        usage = Usage(input_tokens=tokens, output_tokens=tokens // 10)
        state.messages.append(
            Message(role="assistant", content=[TextBlock(text=f"a{turn}")], usage=usage)
        )
        now = time.time()
        record = RunRecord(
            SessionInfo(key, platform), [f"{key}-{turn}"], "message", "u", "claude-test",
            "end_turn", 1, usage, now, now,
        )  # fmt: skip
        await db.history.record(state, record)


async def ask(db: Database, key: str, confirmation_id: str) -> None:
    """An approval asked for in `key`, as a turn asks for one."""
    call = CallSummary(call_id="t1", name="shell", arguments={"cmd": "ls"})
    await db.history.asked(
        SessionInfo(key, "tg"),
        Confirmation(
            id=confirmation_id, session=key, envelope_id="e1", requester="tg:1", calls=[call],
            expires_at=time.time() + 60,
        ),
    )  # fmt: skip


async def schedule(book: TaskBook, key: str, prompt: str, *, ended: bool = False) -> int:
    """A task made in `key`, as schedule_task makes one; `ended`: cancelled since."""
    now = datetime.now(UTC)
    when = parse_when("0 9 * * *", zoneinfo.ZoneInfo("UTC"), now)
    target = Target(session=key, platform="telegram", reply_to={"chat_id": 1})
    task = await book.add(NewTask(target, ANN, prompt, "0 9 * * *", when), max_active=9, now=now)
    if ended:
        await book.end(task.id, ANN)
    return task.id


async def left(db: Database, table: Table, column: str) -> list[object]:
    async with db.engine.connect() as connection:
        query = select(table.c[column]).order_by(table.c[column])
        return list((await connection.execute(query)).scalars())


async def age(db: Database, table: Table, column: str, where: ColumnElement[bool]) -> None:
    """Date rows before the window, as if they had been written 40 days ago."""
    async with db.engine.begin() as connection:
        await connection.execute(update(table).where(where).values({column: LONG_AGO}))


async def test_pages_come_newest_first_with_the_total(db: Database) -> None:
    for n in range(7):
        await converse(db, f"tg:{n}")
        await asyncio.sleep(0.002)  # distinct activity times
    total, first = await db.archive.sessions(0, 3)
    _, second = await db.archive.sessions(3, 3)
    _, last = await db.archive.sessions(6, 3)
    _, beyond = await db.archive.sessions(50, 3)
    assert total == 7
    assert [s.id for s in first + second + last] == [f"tg:{n}" for n in range(6, -1, -1)]
    assert beyond == []


async def test_stats_add_up_every_session(db: Database) -> None:
    await converse(db, "tg:1", turns=2)
    await converse(db, "slack:T:C", platform="slack")
    stats = await db.archive.stats()
    assert (stats.sessions, stats.messages, stats.runs, stats.failed_runs) == (2, 6, 3, 0)
    assert (stats.usage.input, stats.usage.output) == (300, 30)
    assert stats.by_platform["tg"].input == 200 and stats.by_platform["slack"].input == 100
    assert stats.by_model["claude-test"].cost_usd is not None
    assert stats.usage.cost_usd is not None and stats.usage.cost_usd > 0


async def test_a_helpers_tokens_are_counted_once_in_its_parents(db: Database) -> None:
    """A turn that ran a helper: the parent's run holds the helper's tokens (40 of its 140),
    and so does the helper's own session. The totals count them once, in the parent; the
    helper's run is still counted as a run, and its session as a session, but not as one of
    the chat's threads, nor its platform (`http`) as one that spent anything."""
    await converse(db, "slack:T:C:1.5", platform="slack", tokens=140)
    await converse(db, "slack:T:C:1.5:helper-toolu_1", platform="http", tokens=40)
    await converse(db, "slack:T:C:2.5", platform="slack")
    stats = await db.archive.stats()
    assert (stats.sessions, stats.runs) == (3, 3)
    assert (stats.usage.input, stats.usage.output) == (240, 24)
    assert set(stats.by_platform) == {"slack"}
    assert stats.by_platform["slack"].input == 240
    assert stats.by_model["claude-test"].input == 240
    own = await db.archive.session("slack:T:C:1.5")
    priced = [stats.usage.cost_usd, stats.by_model["claude-test"].cost_usd]
    assert own is not None and own.usage.cost_usd is not None
    assert priced == [pytest.approx(own.usage.cost_usd * 240 / 140)] * 2
    threads, tokens = await db.archive.totals("slack:T:C")
    assert (threads, tokens.input, tokens.output) == (2, 240, 24)
    assert tokens.cost_usd == pytest.approx(stats.usage.cost_usd)
    one, alone = await db.archive.totals("slack:T:C:1.5")
    assert (one, alone.input) == (1, 140)


async def test_delete_removes_everything_about_one_session(
    db: Database, redis_client: Redis
) -> None:
    book = TaskBook(db.engine, redis_client)
    for key in ("tg:1", "tg:2"):
        await converse(db, key, turns=2 if key == "tg:1" else 1)
        await ask(db, key, f"c-{key}")
        await schedule(book, key, f"remind {key}")
        await schedule(book, key, f"reminded {key}", ended=True)
    assert (await db.archive.delete("tg:1")).existed
    assert not (await db.archive.delete("tg:1")).existed
    assert await db.archive.session("tg:1") is None
    async with db.engine.connect() as connection:
        for table, count in ((MESSAGES, 2), (RUNS, 1), (CONFIRMATIONS, 1), (TASKS, 2)):
            session = table.c.session_key
            rows = select(session, func.count()).group_by(session)
            assert dict((await connection.execute(rows)).all()) == {"tg:2": count}


async def test_prune_drops_old_messages_and_idle_sessions(db: Database) -> None:
    await converse(db, "tg:old")
    await converse(db, "tg:active", turns=2)
    long_ago = datetime.now(UTC) - timedelta(days=40)
    async with db.engine.begin() as connection:
        await connection.execute(
            update(SESSIONS).where(SESSIONS.c.key == "tg:old").values(updated_at=long_ago)
        )
        await connection.execute(
            update(MESSAGES).where(MESSAGES.c.text.in_(["q0", "a0"])).values(created_at=long_ago)
        )
    pruned = await db.archive.prune(datetime.now(UTC) - timedelta(days=30))
    assert pruned.sessions == ["tg:old"]
    active = await db.archive.session("tg:active")
    assert active is not None and [m.text for m in active.recent] == ["q1", "a1"]
    assert active.messages == 2 and active.usage.input == 200  # what it cost is kept
    assert await db.archive.session("tg:old") is None


async def test_prune_removes_every_row_older_than_the_window_in_active_sessions_too(
    db: Database, redis_client: Redis
) -> None:
    book = TaskBook(db.engine, redis_client)
    await converse(db, "tg:active", turns=3)
    await ask(db, "tg:active", "c-old")
    await ask(db, "tg:active", "c-new")
    old_task = await schedule(book, "tg:active", "ended long ago", ended=True)
    await schedule(book, "tg:active", "ended lately", ended=True)
    standing = await schedule(book, "tg:active", "still wanted")
    first_two = select(MESSAGES.c.run_id).where(MESSAGES.c.text.in_(["q0", "q1"]))
    await age(db, RUNS, "started_at", RUNS.c.id.in_(first_two.scalar_subquery()))
    await age(db, MESSAGES, "created_at", MESSAGES.c.text.in_(["q0", "a0", "q1", "a1"]))
    await age(db, CONFIRMATIONS, "created_at", CONFIRMATIONS.c.id == "c-old")
    await age(db, TASKS, "updated_at", TASKS.c.id.in_([old_task, standing]))
    pruned = await db.archive.prune(datetime.now(UTC) - WINDOW)
    assert (pruned.sessions, pruned.runs, pruned.messages) == ([], 2, 4)
    assert (pruned.confirmations, pruned.tasks) == (1, 1)
    active = await db.archive.session("tg:active")
    assert active is not None and [m.text for m in active.recent] == ["q2", "a2"]
    assert (active.messages, active.runs, active.usage.input) == (2, 1, 100)  # what is left
    assert await left(db, CONFIRMATIONS, "id") == ["c-new"]
    assert await left(db, TASKS, "prompt") == ["ended lately", "still wanted"]
    again = await db.archive.prune(datetime.now(UTC) - WINDOW)
    assert (again.runs, again.messages, again.confirmations, again.tasks) == (0, 0, 0, 0)
    stats = await db.archive.stats()
    assert (stats.sessions, stats.messages, stats.runs, stats.usage.input) == (1, 2, 1, 100)
