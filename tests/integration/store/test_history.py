"""The durable record end to end: worker processes write it, the web app serves it, and a
conversation outlives every process and a FLUSHALL of Redis."""

from __future__ import annotations

import json
import os
import signal
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from aiohttp import web
from redis.asyncio import Redis
from sqlalchemy import select, update

from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.redis.results import done
from bot.session.states import StateStore
from bot.store.cold_context import CONTEXT, ColdContext
from bot.store.database import Database, open_database
from bot.store.history import SESSIONS, RunRecord, SessionInfo
from bot.tools.workspace_paths import session_dirname
from bot.vocabulary.messages import Message, TextBlock
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage
from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec
from tests.integration.http.test_confirmations import decide
from tests.support.redis_server import free_port
from tests.support.stack import Stack, idle, send, texts, web_settings
from tests.support.waiting import until
from tests.tools.workspace_support import call, context, write_file
from worker.web import make_app

PRICED = {"PARLEY_PRICES": json.dumps({"claude-test": {
    "input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75,
}})}  # fmt: skip


def echo(request: RecordedRequest) -> Reply:
    return Reply(text=f"you said {request.last_user_text().split()[-1]}")


async def session_keys(redis_url: str, session: str) -> list[bytes]:
    redis = Redis.from_url(redis_url)
    try:
        return [k async for k in redis.scan_iter(f"parley:{{http:{session}}}:*")]
    finally:
        await redis.aclose()


@pytest.mark.parametrize("stack", [PRICED], indirect=True)
async def test_every_turn_is_recorded_and_served_by_the_api(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.responder = echo
    async with stack.client() as client:
        session = await stack.session(client)
        await send(client, session, "first apple")
        await send(client, session, "then pear")
        await idle(stack.redis_url)
        listing = (await client.get("/api/sessions")).json()
        detail = (await client.get(f"/api/sessions/{session}")).json()
        stats = (await client.get("/api/stats")).json()
        bad = [
            await client.get("/api/sessions", params={"limit": value})
            for value in ("0", "101", "x")
        ]
        missing = await client.get("/api/sessions/tg:404")
    assert listing["total"] == 1 and listing["items"][0]["id"] == f"http:{session}"
    assert detail["title"] == "first apple" and detail["runs"] == 2 and not detail["running"]
    said = [(m["role"], m["text"].split("\n")[-1]) for m in detail["recent"]]
    assert said == [
        ("user", "first apple"),
        ("assistant", "you said apple"),
        ("user", "then pear"),
        ("assistant", "you said pear"),
    ]
    answer = detail["recent"][1]
    used = answer["usage"]
    assert used["input"] + used["cache_write"] + used["cache_read"] > 0 and used["cost_usd"] > 0
    assert detail["recent"][0]["sender"] == "http:local"
    total = sum(m["usage"]["input"] for m in detail["recent"] if m["usage"])
    assert stats["usage"]["input"] == detail["usage"]["input"] == total
    assert stats["messages"] == 4 and stats["by_platform"]["http"]["cost_usd"] > 0
    assert [r.status_code for r in bad] == [400, 400, 400] and "limit" in bad[0].json()["error"]
    assert missing.status_code == 404 and missing.json()["error"] == "unknown session"


@pytest.mark.parametrize("database_url", ["sqlite", "postgresql"], indirect=True)
async def test_a_conversation_survives_restarts_and_a_flushall(stack: Stack) -> None:
    worker = await stack.start_worker_process()
    stack.fake.responder = lambda r: Reply(text=f"noted ({len(r.body['messages'])} messages)")
    async with stack.client() as client:
        session = await stack.session(client)
        await send(client, session, "My name is Ann.")
        await send(client, session, "I like tea.")
    await idle(stack.redis_url)
    stack.kill(worker, signal.SIGTERM)
    await worker.wait()
    redis = Redis.from_url(stack.redis_url)
    await redis.flushall()
    await redis.aclose()
    await stack.start_worker_process()
    runner = web.AppRunner(await make_app(web_settings(stack.env)), access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        stack.base_url = f"http://127.0.0.1:{port}"
        async with stack.client() as client:
            events = await send(client, session, "What is my name?")
            await idle(stack.redis_url)
            detail = (await client.get(f"/api/sessions/{session}")).json()
    finally:
        await runner.cleanup()
    seen = json.dumps(stack.fake.requests[-1].body["messages"])
    assert "My name is Ann." in seen and "I like tea." in seen
    assert texts(events) == "noted (5 messages)"
    assert [m["role"] for m in detail["recent"]] == ["user", "assistant"] * 3


def workspace(stack: Stack, session: str) -> Path:
    """Where the session's files are, as the stack's web process and workers both see it."""
    return Path(stack.env["PARLEY_WORKSPACE_DIR"]) / session_dirname(session)


async def keeps(stack: Stack, client: httpx.AsyncClient, session: str, path: str) -> None:
    """The model keeps a file in the session's workspace, once a person approved it."""
    write = ToolCallSpec("write_file", {"path": path, "content": f"kept in {path}"})
    stack.fake.enqueue(Reply(tool_calls=[write]))
    events = await send(client, session, f"keep {path}")
    (asked,) = [e for e in events if e["type"] == "confirmation_required"]
    stack.fake.enqueue(Reply(text=f"kept {path}"))
    assert texts(await decide(client, asked["confirmation_id"], "approve")) == f"kept {path}"


async def test_deleting_a_session_forgets_it_everywhere(stack: Stack) -> None:
    await stack.start_worker()
    async with stack.client() as client:
        session = await stack.session(client)
        other = await stack.session(client)
        await keeps(stack, client, session, "plans/secret.md")
        await keeps(stack, client, other, "keep.md")
        await idle(stack.redis_url)
        assert await session_keys(stack.redis_url, session)
        written = (workspace(stack, f"http:{session}") / "plans" / "secret.md").read_text()
        deleted = await client.delete(f"/api/sessions/http:{session}")
        again = await client.delete(f"/api/sessions/{session}")
        read = await client.get(f"/api/sessions/{session}")
        post = await client.post(f"/api/sessions/{session}/messages", json={"text": "hi"})
        listing = (await client.get("/api/sessions")).json()
    assert written == "kept in plans/secret.md"
    assert not workspace(stack, f"http:{session}").exists()
    assert deleted.status_code == 200 and deleted.json()["deleted"] == f"http:{session}"
    assert deleted.json()["workspace"] is True
    assert (workspace(stack, f"http:{other}") / "keep.md").read_text() == "kept in keep.md"
    assert await session_keys(stack.redis_url, session) == []
    assert [again.status_code, read.status_code, post.status_code] == [404, 404, 404]
    assert [item["id"] for item in listing["items"]] == [f"http:{other}"]


LONG_AGO = time.time() - 31 * 86_400


async def remember(database: Database, session: str, envelope: str, at: float) -> None:
    """A run of `session` that started at `at`, with its message, as a worker records it."""
    said = Message(role="user", content=[TextBlock(text=envelope)], at=at)
    record = RunRecord(
        SessionInfo(session, "tg"), [envelope], "message", "tg:1", "claude-test", "end_turn", 1,
        Usage(input_tokens=10), at, at + 1,
    )  # fmt: skip
    await database.history.record(SessionState(messages=[said]), record)


def keep(stack: Stack, session: str, path: str, *, at: float | None = None) -> Path:
    """A file the model wrote in the session's workspace; `at`: last changed then."""
    base = Path(stack.env["PARLEY_WORKSPACE_DIR"])
    call(write_file, context(base, session), path=path, content=path)
    where = workspace(stack, session) / path
    if at is not None:
        os.utime(where, (at, at))
    return where


async def pruned(database: Database, redis: Redis, stack: Stack) -> bool:
    """Whether the worker's retention pass has done all it is to do here."""
    runs = await database.archive.session("tg:new")
    return (
        await database.archive.session("tg:old") is None
        and not await redis.exists("parley:{tg:old}:state")
        and not workspace(stack, "tg:old").exists()
        and runs is not None
        and runs.runs == 1
        and not (workspace(stack, "tg:new") / "notes" / "old.md").exists()
    )


@pytest.mark.parametrize("stack", [{"PARLEY_RETENTION_DAYS": "30"}], indirect=True)
async def test_retention_removes_everything_older_than_its_window_on_a_worker(
    stack: Stack,
) -> None:
    """A session idle for longer goes whole, with its hot state and workspace; an active
    one loses its older runs, messages and files, and keeps the rest and its hot state."""
    database = await open_database(web_settings(stack.env))
    redis = Redis.from_url(stack.redis_url)
    try:
        await remember(database, "tg:old", "e-old", LONG_AGO)
        await remember(database, "tg:new", "e-long-ago", LONG_AGO)
        await remember(database, "tg:new", "e-today", time.time())
        async with database.engine.begin() as connection:
            await connection.execute(
                update(SESSIONS).where(SESSIONS.c.key == "tg:old").values(updated_at=long_ago())
            )
        await redis.set("parley:{tg:old}:state", "{}")
        await redis.set("parley:{tg:new}:state", "{}")
        keep(stack, "tg:old", "notes/todo.md")
        old_file = keep(stack, "tg:new", "notes/old.md", at=LONG_AGO)
        new_file = keep(stack, "tg:new", "notes/new.md")
        await stack.start_worker()  # prunes as it starts, then hourly
        await until(lambda: pruned(database, redis, stack), "the retention pass")
        active = await database.archive.session("tg:new")
        assert await database.archive.session("tg:old") is None
        assert not await redis.exists("parley:{tg:old}:state")
        assert not workspace(stack, "tg:old").exists()
        assert active is not None and [m.text for m in active.recent] == ["e-today"]
        assert (active.runs, active.messages, active.usage.input) == (1, 1, 10)
        assert not old_file.exists() and new_file.read_text() == "notes/new.md"
        assert await redis.exists("parley:{tg:new}:state")  # its context is not the record's
    finally:
        await redis.aclose()
        await database.aclose()


def long_ago() -> datetime:
    return datetime.fromtimestamp(LONG_AGO, UTC)


class _NoJobs:
    """The test's own mailbox only writes a state: it never wakes a worker."""

    async def enqueue_job(self, function: str, *args: object, **kwargs: object) -> None:
        return None


def said_turn(n: int, topic: str, at: float) -> list[Message]:
    """A question and its answer, some 4 KB, said at `at`."""
    padding = "lorem ipsum dolor sit amet " * 70
    return [
        Message(role="user", content=[TextBlock(text=f"{topic} {n}. {padding}")], at=at),
        Message(role="assistant", content=[TextBlock(text=f"noted {n}. {padding}")], at=at),
    ]


async def save_context(database: Database, redis: Redis, session: str, state: SessionState) -> None:
    """Save `state` as a worker's turn does, under the session's lease: its older turns go
    to SQL, its recent ones stay in Redis."""
    mailbox = Mailbox(redis, _NoJobs())
    token = await mailbox.take_lease(session, ttl=30)
    assert token is not None
    await StateStore(mailbox, ColdContext(database.engine)).save(session, token, state)
    await mailbox.release(session, token)


async def context_kept(database: Database, redis: Redis, session: str) -> str:
    """Everything the session's context holds, in Redis and in SQL."""
    recent = await done(redis.lrange(keys.session(session, "context"), 0, -1))
    rows = select(CONTEXT.c.body).where(CONTEXT.c.session_key == session)
    async with database.engine.connect() as connection:
        older = list((await connection.execute(rows)).scalars())
    return "\n".join([*older, *(item.decode() for item in recent)])


@pytest.mark.parametrize("stack", [{"PARLEY_RETENTION_DAYS": "30"}], indirect=True)
async def test_retention_cuts_an_active_sessions_context_to_its_window(stack: Stack) -> None:
    """An active session's context, its recent turns in Redis and its older ones in SQL,
    loses the turns said before the window, the summary of still older ones with them, and
    the model is never sent them again; the turns since stay whole."""
    database = await open_database(web_settings(stack.env))
    redis = Redis.from_url(stack.redis_url)
    stack.fake.responder = lambda request: Reply(text="fine")
    try:
        async with stack.client() as client:
            session = f"http:{await stack.session(client)}"
            await remember(database, session, "e-today", time.time())
            async with database.engine.begin() as connection:  # in use for over 30 days
                await connection.execute(
                    update(SESSIONS).where(SESSIONS.c.key == session).values(created_at=long_ago())
                )
            summary = Message(
                role="user", summary=True, at=LONG_AGO,
                content=[TextBlock(text="Summary: an old secret was told.")],
            )  # fmt: skip
            old = [m for n in range(20) for m in said_turn(n, "an old secret", LONG_AGO + n)]
            new = [m for n in range(3) for m in said_turn(n, "a new fact", time.time())]
            await save_context(
                database, redis, session, SessionState(messages=[summary, *old, *new])
            )
            assert "an old secret" in await context_kept(database, redis, session)
            await stack.start_worker()  # prunes as it starts, then hourly

            async def cut() -> bool:
                return "old secret" not in await context_kept(database, redis, session)

            await until(cut, "the live context cut to the window")
            assert texts(await send(client, session.removeprefix("http:"), "and now?")) == "fine"
        sent = json.dumps(stack.fake.requests[-1].body["messages"])
        assert "old secret" not in sent
        assert all(f"a new fact {n}." in sent for n in range(3))
        assert len(stack.fake.requests[-1].body["messages"]) == 2 * 3 + 1
    finally:
        await redis.aclose()
        await database.aclose()
