"""Reading the record back: pages, totals, deletion and retention."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, update

from bot.agent.state import SessionState
from bot.llm.events import Usage
from bot.messages import Message, TextBlock
from bot.store.database import Database
from bot.store.history import MESSAGES, RUNS, SESSIONS, RunRecord, SessionInfo


async def converse(db: Database, key: str, platform: str = "tg", turns: int = 1) -> None:
    state = SessionState()
    for turn in range(turns):
        state.messages.append(Message(role="user", content=[TextBlock(text=f"q{turn}")]))
        usage = Usage(input_tokens=100, output_tokens=10)
        state.messages.append(
            Message(role="assistant", content=[TextBlock(text=f"a{turn}")], usage=usage)
        )
        now = time.time()
        record = RunRecord(
            SessionInfo(key, platform), [f"{key}-{turn}"], "message", "u", "claude-test",
            "end_turn", 1, usage, now, now,
        )  # fmt: skip
        await db.history.record(state, record)


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


async def test_delete_removes_everything_about_one_session(db: Database) -> None:
    await converse(db, "tg:1", turns=2)
    await converse(db, "tg:2")
    assert await db.archive.delete("tg:1")
    assert not await db.archive.delete("tg:1")
    assert await db.archive.session("tg:1") is None
    async with db.engine.connect() as connection:
        for table in (MESSAGES, RUNS):
            left = select(table.c.session_key, func.count()).group_by(table.c.session_key)
            assert dict((await connection.execute(left)).all()) == {
                "tg:2": 2 if table is MESSAGES else 1
            }


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
    gone = await db.archive.prune(datetime.now(UTC) - timedelta(days=30))
    assert gone == ["tg:old"]
    active = await db.archive.session("tg:active")
    assert active is not None and [m.text for m in active.recent] == ["q1", "a1"]
    assert active.messages == 2 and active.usage.input == 200  # what it cost is kept
    assert await db.archive.session("tg:old") is None
