"""Recording runs: written once however often a run is recorded, rebuilt the way it was."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from sqlalchemy import Table, event, func, select, text

from bot.redis.confirmations import CallSummary, Confirmation
from bot.store.database import Database
from bot.store.engine import make_engine, writers
from bot.store.history import CONFIRMATIONS, MESSAGES, RUNS, RunRecord, SessionInfo
from bot.store.people import People
from bot.store.turn_facts import TurnReads
from bot.vocabulary.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage

WHERE = SessionInfo("tg:1", "tg", "private", "hello")
USAGE = Usage(input_tokens=1000, output_tokens=200, cache_read_tokens=5000, cache_write_tokens=300)


def user(text: str) -> Message:
    return Message(role="user", content=[TextBlock(text="[stamp]"), TextBlock(text=text)])


def assistant(text: str, usage: Usage = USAGE) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)], usage=usage)


def run(envelope: str, usage: Usage = USAGE, finish: str = "end_turn") -> RunRecord:
    now = time.time()
    return RunRecord(
        WHERE, [envelope], "message", "tg:42", "claude-test", finish, 1, usage, now - 2, now,
        first_text_at=now - 1.5,
    )  # fmt: skip


async def count(db: Database, table: Table) -> int:
    query = select(func.count()).select_from(table)
    async with db.engine.connect() as connection:
        return int((await connection.execute(query)).scalar_one())


async def test_recording_a_run_twice_writes_it_once(db: Database) -> None:
    state = SessionState(messages=[user("hi"), assistant("hello")])
    before = state.recorded
    await db.history.record(state, run("e1"))
    state.recorded = before  # the commit to Redis was lost: the resumed turn records again
    await db.history.record(state, run("e1"))
    assert await count(db, MESSAGES) == 2
    assert await count(db, RUNS) == 1
    info = await db.archive.session("tg:1")
    assert info is not None and info.messages == 2 and info.runs == 1
    assert (info.usage.input, info.usage.cache_read, info.usage.output) == (1000, 5000, 200)
    expected = (1000 * 3.0 + 200 * 15.0 + 5000 * 0.3 + 300 * 3.75) / 1e6
    assert info.usage.cost_usd == pytest.approx(expected)
    first, second = info.recent
    assert (first.role, first.sender, first.text) == ("user", "tg:42", "[stamp]\nhi")
    assert second.usage is not None and second.usage.cache_write == 300
    assert second.model == "claude-test" and second.run_id == first.run_id


async def test_next_run_adds_only_its_own_messages_and_totals_add_up(db: Database) -> None:
    state = SessionState(messages=[user("a"), assistant("b")])
    await db.history.record(state, run("e1"))
    state.messages += [user("c"), assistant("d", Usage(input_tokens=10, output_tokens=1))]
    await db.history.record(state, run("e2", Usage(input_tokens=10, output_tokens=1)))
    info = await db.archive.session("tg:1")
    assert info is not None
    assert [m.text.removeprefix("[stamp]\n") for m in info.recent] == ["a", "b", "c", "d"]
    assert (info.runs, info.usage.input, info.usage.output) == (2, 1010, 201)


async def test_a_run_recorded_again_with_more_usage_counts_the_difference(db: Database) -> None:
    """A resumed turn records its run again with what it has used by its end: the session
    counts the run once, at its newer usage, and its messages once."""
    state = SessionState(messages=[user("hi"), assistant("hello")])
    before = state.recorded
    await db.history.record(state, run("e1"))
    state.recorded = before
    more = Usage(input_tokens=1500, output_tokens=300, cache_read_tokens=5000)
    await db.history.record(state, run("e1", more))
    state.messages += [user("again"), assistant("yes", Usage(input_tokens=7))]
    await db.history.record(state, run("e2", Usage(input_tokens=7)))
    info = await db.archive.session("tg:1")
    assert info is not None and (info.runs, info.messages) == (2, 4)
    assert (info.usage.input, info.usage.output, info.usage.cache_write) == (1507, 300, 0)
    cost = (1500 * 3.0 + 300 * 15.0 + 5000 * 0.3 + 7 * 3.0) / 1e6
    assert info.usage.cost_usd == pytest.approx(cost)


async def test_a_record_reads_nothing_that_grows_with_the_session(db: Database) -> None:
    """The session's totals are added to, not summed again from all its runs and messages:
    a record costs the same in a session's thousandth run as in its first."""
    read: list[str] = []

    def executed(_c: object, _cur: object, sql: str, *_: object) -> None:
        read.append(sql.lower())

    state = SessionState()
    event.listen(db.engine.sync_engine, "before_cursor_execute", executed)
    for n in range(3):
        state.messages += [user(f"question {n}"), assistant(f"answer {n}")]
        await db.history.record(state, run(f"e{n}"))
    assert read and not [sql for sql in read if "count(" in sql or "sum(" in sql]
    info = await db.archive.session("tg:1")
    assert info is not None and (info.runs, info.messages, info.usage.input) == (3, 6, 3000)


async def test_a_trailing_user_message_that_grew_is_written_again(db: Database) -> None:
    call = ToolUseBlock(id="t1", name="calculator", input={"expression": "1+1"})
    result = ToolResultBlock(tool_use_id="t1", content="2")
    state = SessionState(messages=[user("sum"), assistant("", USAGE)])
    state.messages[-1].content = [call]
    state.messages.append(Message(role="user", content=[result]))
    await db.history.record(state, run("e1", finish="cancelled"))
    state.add_user(TextBlock(text="never mind"))  # merged into the recorded message
    state.messages.append(assistant("ok"))
    await db.history.record(state, run("e2"))
    info = await db.archive.session("tg:1")
    assert info is not None and info.messages == 4
    merged = info.recent[2]
    assert [block["type"] for block in merged.content] == ["tool_result", "text"]


async def test_restore_starts_at_the_latest_summary_and_after_new(db: Database) -> None:
    summary = Message(role="user", summary=True, content=[TextBlock(text="Summary: Ann")])
    state = SessionState(messages=[user("I am Ann"), assistant("hi Ann")])
    await db.history.record(state, run("e1"))
    state.messages = [summary, user("what now?"), assistant("tea")]  # compacted
    await db.history.record(state, run("e2"))
    restored = await db.history.restore("tg:1")
    assert restored is not None
    assert [m.text for m in restored.messages] == ["Summary: Ann", "[stamp]\nwhat now?", "tea"]
    assert restored.messages[0].summary and restored.recorded == state.messages[-1].id
    await db.history.reset("tg:1")  # /new
    after_new = await db.history.restore("tg:1")
    assert after_new is not None and after_new.messages == []
    assert await db.history.restore("tg:unknown") is None


async def test_restore_never_starts_with_an_orphaned_tool_result(db: Database) -> None:
    call = assistant("")
    call.content = [ToolUseBlock(id="t1", name="calculator", input={})]
    result = Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="2")])
    state = SessionState(messages=[user("q"), call, result, assistant("2"), user("r")])
    state.messages.append(assistant("s"))
    await db.history.record(state, run("e1"))
    restored = await db.history.restore("tg:1", limit=4)  # the window cuts the tool call off
    assert restored is not None
    assert [m.text for m in restored.messages] == ["[stamp]\nr", "s"]


async def test_approvals_audit_who_decided_what(db: Database) -> None:
    record = Confirmation(
        id="c1",
        session="tg:1",
        envelope_id="e1",
        requester="tg:42",
        calls=[CallSummary(call_id="t1", name="shell", arguments={"cmd": "ls"})],
        expires_at=time.time() + 60,
    )
    await db.history.asked(WHERE, record)
    await db.history.asked(WHERE, record)
    decided = record.model_copy(
        update={"status": "approved", "decided_by": "tg:7", "decided_at": time.time()}
    )
    await db.history.decided(decided)
    async with db.engine.connect() as connection:
        rows = (await connection.execute(select(CONFIRMATIONS))).all()
    assert len(rows) == 1
    row = rows[0]
    assert (row.status, row.decided_by, row.requester) == ("approved", "tg:7", "tg:42")
    assert row.calls == [{"call_id": "t1", "name": "shell", "arguments": {"cmd": "ls"}}]


RECORDS_AT_ONCE = 40  # runs ending together, more than a process's pool has connections


async def test_records_at_once_leave_connections_for_the_reads_of_new_turns(db: Database) -> None:
    """Many runs that end together wait for the database's write lock without each holding a
    pooled connection: a turn's read made meanwhile gets one at once, instead of queueing
    behind every record (SQLite writes one at a time; PostgreSQL gets a few writers)."""
    held, most = 0, 0

    def checkout(*_: object) -> None:
        nonlocal held, most
        held += 1
        most = max(most, held)

    def checkin(*_: object) -> None:
        nonlocal held
        held -= 1

    event.listen(db.engine.sync_engine.pool, "checkout", checkout)
    event.listen(db.engine.sync_engine.pool, "checkin", checkin)
    recording = [
        asyncio.create_task(
            db.history.record(SessionState(messages=[user(f"{n}"), assistant("!")]), run(f"e{n}"))
        )
        for n in range(RECORDS_AT_ONCE)
    ]
    await asyncio.sleep(0)  # every record has started and waits for its turn to write
    await People(db.engine).preferences("tg:42")
    written_before_the_read = sum(task.done() for task in recording)
    await asyncio.gather(*recording)
    assert await count(db, RUNS) == RECORDS_AT_ONCE
    assert most <= writers(db.engine) + 1  # the records' few writers, and the read
    assert written_before_the_read < RECORDS_AT_ONCE // 4


async def test_busy_turns_keep_to_the_connections_the_pool_opened(db: Database) -> None:
    """Turns that overlap (each reads what it is prepared with, at once, then records) reuse
    the connections the pool opened for the first of them: a connection opened and closed
    for a moment costs more than the reads it serves."""
    opened = 0

    def connected(*_: object) -> None:
        nonlocal opened
        opened += 1

    event.listen(db.engine.sync_engine, "connect", connected)
    reads = TurnReads(db.engine)

    async def turn(n: int) -> None:
        await reads.read("tg:42", "tg:1", "tg:1", "tg:42")
        await db.history.record(SessionState(messages=[user(f"{n}"), assistant("!")]), run(f"e{n}"))

    await asyncio.gather(*(turn(n) for n in range(RECORDS_AT_ONCE)))
    warm = opened
    await asyncio.gather(*(turn(n) for n in range(RECORDS_AT_ONCE, 2 * RECORDS_AT_ONCE)))
    assert await count(db, RUNS) == 2 * RECORDS_AT_ONCE
    assert opened == warm


@pytest.mark.parametrize("url", ["sqlite+aiosqlite:///:memory:", "sqlite+aiosqlite://"])
async def test_an_in_memory_database_keeps_its_one_connection(url: str) -> None:
    """The pool's size is for databases others can reach too; an in-memory SQLite database
    keeps the one connection that holds it, and works."""
    engine = make_engine(url)
    try:
        async with engine.begin() as db:
            await db.execute(text("CREATE TABLE t (x INTEGER)"))
            await db.execute(text("INSERT INTO t VALUES (1)"))
        async with engine.connect() as db:
            assert (await db.execute(text("SELECT x FROM t"))).scalar_one() == 1
    finally:
        await engine.dispose()


async def test_a_record_builds_no_statement_anew(db: Database) -> None:
    """A record executes statements built once, with its rows as parameters: building an
    upsert (a proxy for each column's `excluded` value) and the cache key that finds its
    compiled SQL cost more than running it, hundreds of times a second on a busy worker."""
    executed: list[list[object]] = []

    def executing(_c: object, statement: object, *_: object) -> None:
        executed[-1].append(statement)

    event.listen(db.engine.sync_engine, "before_execute", executing)
    for n in range(3):
        executed.append([])
        state = SessionState(messages=[user(f"question {n}"), assistant(f"answer {n}")])
        await db.history.record(state, run(f"e{n}", finish="end_turn" if n else "max_tokens"))
    assert len(executed[1]) >= 4  # its session, run, messages and totals
    assert [id(s) for s in executed[1]] == [id(s) for s in executed[2]]
    assert [id(s) for s in executed[0]] == [id(s) for s in executed[1]]


async def test_a_record_reuses_its_compiled_statements(db: Database) -> None:
    """Each record runs the same few statements; compiling one again for every run (as a
    VALUES list of rows would be) costs the worker CPU while other turns stream."""
    compiled: dict[str, list[object]] = {}

    def executed(_c: object, _cur: object, sql: str, _p: object, context: Any, _m: bool) -> None:
        compiled.setdefault(sql.split("(", maxsplit=1)[0], []).append(context.compiled)

    event.listen(db.engine.sync_engine, "before_cursor_execute", executed)
    for n in range(3):
        state = SessionState(messages=[user(f"question {n}"), assistant(f"answer {n}")])
        await db.history.record(state, run(f"e{n}"))
    assert "INSERT INTO messages " in compiled
    for sql, each in compiled.items():
        assert len(each) == 3 and each[1] is each[2], f"compiled anew each time: {sql}"
