"""A record that failed (the database read-only, or away) is caught up by the next one: its
run as well as its messages, once, with the session's totals adding up."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store import history
from bot.store.database import Database
from bot.store.engine import make_engine
from bot.store.history import RUNS
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage
from tests.store.test_history import assistant, run, user

SMALL = Usage(input_tokens=10, output_tokens=1)


def read_only(db: Database) -> AsyncEngine:
    """A second engine on the same database whose every transaction refuses writes, the way
    a read-only file or a read-only PostgreSQL transaction does (also for root)."""
    engine = make_engine(db.engine.url.render_as_string(hide_password=False))
    if engine.dialect.name == "postgresql":
        return engine.execution_options(postgresql_readonly=True)

    def refuse_writes(connection: Any, record: Any) -> None:
        cursor = connection.cursor()
        cursor.execute("PRAGMA query_only=ON")
        cursor.close()

    event.listen(engine.sync_engine, "connect", refuse_writes)
    return engine


async def run_rows(db: Database) -> list[Any]:
    async with db.engine.connect() as connection:
        return list((await connection.execute(select(RUNS).order_by(RUNS.c.started_at))).all())


async def test_runs_the_database_refused_are_written_by_the_next_record(db: Database) -> None:
    working, refusing = db.history.engine, read_only(db)
    state = SessionState(messages=[user("a"), assistant("b")])
    db.history.engine = refusing
    try:
        with pytest.raises(SQLAlchemyError):
            await db.history.record(state, run("e1"))
    finally:
        db.history.engine = working
        await refusing.dispose()
    assert [r.id for r in state.unrecorded] == [run("e1").id] and state.recorded is None
    state.messages += [user("c"), assistant("d", SMALL)]
    saved = state.model_copy(deep=True)
    await db.history.record(state, run("e2", SMALL))
    assert state.unrecorded == [] and state.recorded == state.messages[-1].id
    await db.history.record(saved, run("e2", SMALL))  # its commit to Redis was lost
    rows = await run_rows(db)
    info = await db.archive.session("tg:1")
    assert info is not None
    assert [r.id for r in rows] == [run("e1").id, run("e2").id]
    assert [m.run_id for m in info.recent] == [rows[0].id] * 2 + [rows[1].id] * 2
    assert (info.runs, info.messages) == (2, 4)
    from_messages = sum(m.usage.input for m in info.recent if m.usage)
    from_runs = sum(r.input_tokens for r in rows)
    assert info.usage.input == from_runs == from_messages == 1010
    assert info.usage.output == sum(r.output_tokens for r in rows) == 201


async def test_at_most_so_many_runs_wait_and_the_dropped_are_logged(
    db: Database, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(history, "MAX_UNRECORDED", 3)
    working, refusing = db.history.engine, read_only(db)
    state = SessionState()
    db.history.engine = refusing
    try:
        for n in range(1, 5):
            state.messages += [user(f"q{n}"), assistant(f"a{n}")]
            with pytest.raises(SQLAlchemyError):
                await db.history.record(state, run(f"e{n}"))
    finally:
        db.history.engine = working
        await refusing.dispose()
    assert [r.envelope_ids[0] for r in state.unrecorded] == ["e2", "e3", "e4"]
    assert "dropped from the record" in caplog.text and "tg:1" in caplog.text
    await db.history.record(state, run("e5"))
    rows = await run_rows(db)
    assert [r.envelope_ids for r in rows] == [["e3"], ["e4"], ["e5"]]
    info = await db.archive.session("tg:1", recent=20)
    assert info is not None and info.messages == 8 and info.runs == 3
