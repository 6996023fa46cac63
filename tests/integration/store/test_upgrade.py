"""Upgrading a deployment: a database made and written by an older version, migrated by this
one (`parley migrate`, or a worker's start), keeps its data and serves it; and a version older
than its database refuses to start rather than run on a schema it does not know.

The older version's rows are written as it wrote them: with SQL against the tables as they
were at its revision (reflected from the database, so the test needs no copy of old code).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from arq.connections import RedisSettings, create_pool
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.mailbox.inbox import Mailbox
from bot.store import revision as schema
from bot.store.database import upgrade
from bot.store.engine import make_engine
from bot.vocabulary.envelope import Envelope, Sender
from tests.fakes.llm import FakeLLM, RecordedRequest, Reply
from tests.support.parley import PIPE, STDOUT, start_parley
from tests.support.redis_server import free_port
from tests.support.stack import Stack, database_for, idle, stack_env
from tests.support.waiting import until

OLD = "0010"  # before 0011 (message_files, filled from the messages' contents) and later
SESSION = "test:old"
FILED = "test:filed"
SHA = "ab" * 32
NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
DEFAULTS: dict[type, Any] = {
    sa.String: "old",
    sa.Text: "old",
    sa.Integer: 0,
    sa.BigInteger: 0,
    sa.Float: 0.0,
    sa.Numeric: 0,
    sa.Boolean: False,
    sa.DateTime: NOW,
    sa.JSON: {},
}


def _default(column: sa.Column[Any]) -> Any:
    for kind, value in DEFAULTS.items():
        if isinstance(column.type, kind):
            return value
    raise AssertionError(f"no default for {column.table.name}.{column.name}: {column.type}")


def _required(column: sa.Column[Any]) -> bool:
    """Whether the old schema needs a value for `column` (a counted key is made for it)."""
    counted = column.primary_key and isinstance(column.type, sa.Integer)
    return not (column.nullable or column.server_default is not None or counted)


async def insert(db: AsyncConnection, name: str, **values: Any) -> None:
    """A row as the old version wrote it: `values`, and a plain value in every other column
    its schema required."""
    table = await db.run_sync(lambda sync: sa.Table(name, sa.MetaData(), autoload_with=sync))
    unknown = set(values) - set(table.c.keys())
    assert not unknown, f"{name} had no columns {unknown} at {OLD}"
    row = {c.name: values.get(c.name, _default(c)) for c in table.c if _required(c)} | values
    await db.execute(table.insert().values(**row))


def text(said: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": said}]


async def written_the_old_way(url: str) -> None:
    """A database at OLD holding a conversation, and a message carrying a file."""
    await upgrade(url, revision=OLD, wait=0)
    engine = make_engine(url)
    try:
        async with engine.begin() as db:
            for key in (SESSION, FILED):
                await insert(db, "sessions", key=key, platform="test", chat_kind="private",
                             title=key, message_count=2, run_count=1, context_from=0)  # fmt: skip
            said = [("user", "my cat is called Tom"), ("assistant", "Noted: Tom.")]
            for n, (role, words) in enumerate(said):
                await insert(db, "messages", id=f"old{n}", session_key=SESSION, role=role,
                             summary=False, content=text(words), text=words)  # fmt: skip
            picture = [{"type": "image", "file": {"sha256": SHA, "media_type": "image/png"}}]
            await insert(db, "messages", id="filed0", session_key=FILED, role="user",
                         summary=False, content=picture, text="")  # fmt: skip
            await insert(db, "runs", id="oldrun", session_key=SESSION, envelope_ids=["e0"],
                         trigger="message", sender="test:u", model="claude-test", status="ok",
                         finish_reason="end_turn", iterations=1, latency_ms=5)  # fmt: skip
    finally:
        await engine.dispose()


async def parley(env: dict[str, str], cwd: Path, *args: str) -> tuple[int, str]:
    """`parley ARGS` as a process: its exit status and what it said."""
    proc = await start_parley(*args, env=env, cwd=cwd, stdout=PIPE, stderr=STDOUT)
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode is not None
    return proc.returncode, out.decode(errors="replace")


async def scalar(url: str, query: str) -> Any:
    engine = make_engine(url)
    try:
        async with engine.connect() as db:
            return (await db.execute(sa.text(query))).scalar()
    finally:
        await engine.dispose()


def remembers(request: RecordedRequest) -> Reply:
    """Answers with the cat's name when the history it was sent holds it."""
    history = json.dumps(request.body["messages"])
    return Reply(text="Your cat is Tom." if "called Tom" in history else "Who?")


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
@pytest.mark.parametrize("how", ["parley migrate", "a worker's start"])
async def test_data_written_by_an_older_version_survives_the_upgrade_and_serves(
    kind: str,
    how: str,
    redis_url: str,
    fake_llm: FakeLLM,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    url = database_for(kind, tmp_path, request)
    await written_the_old_way(url)
    env = stack_env(redis_url, fake_llm, url)
    stack = Stack(redis_url, fake_llm, tmp_path, env=env)
    fake_llm.responder = remembers
    try:
        if how == "parley migrate":
            status, said = await parley(env, tmp_path, "migrate")
            assert status == 0, said
            assert said.strip().endswith(f"schema at {schema.HEAD}"), said
        await stack.start_worker_process()  # migrates on start, when `parley migrate` did not
        assert await schema.current(url) == schema.HEAD
        # 0011 found the file the old message carried
        filed = "SELECT sha256 FROM message_files WHERE message_id = 'filed0'"
        assert await scalar(url, filed) == SHA
        # Redis knows nothing of the old session: its turn is rebuilt from the old rows
        pool = await create_pool(RedisSettings.from_dsn(redis_url))
        mailbox = Mailbox(pool, pool)
        said_to = Envelope(id="new0", session=SESSION, text="what is my cat called?",
                           sender=Sender(id="test:u"))  # fmt: skip
        assert (await mailbox.submit(said_to)).accepted
        await until(lambda: len(fake_llm.requests) == 1, "the old session's new turn")
        await idle(redis_url)
        await pool.aclose()
        count = f"SELECT COUNT(*) FROM messages WHERE session_key = '{SESSION}'"
        await until(lambda: _equals(scalar(url, count), 4), "the new turn recorded")
        answered = f"SELECT text FROM messages WHERE session_key = '{SESSION}' ORDER BY seq"
        assert await scalar(url, answered) == "my cat is called Tom"
        last = await scalar(url, answered.replace("ORDER BY seq", "ORDER BY seq DESC"))
        assert last == "Your cat is Tom."
        runs = f"SELECT run_count FROM sessions WHERE key = '{SESSION}'"
        assert await scalar(url, runs) == 2
    finally:
        await stack.stop()


async def _equals(value: Any, wanted: Any) -> bool:
    return bool(await value == wanted)


async def migrated_by_a_newer_version(url: str) -> str:
    """Move the database at this code's head one revision on, as a newer version's migration
    would (a table of its own), and return that revision."""
    newer = f"{int(schema.HEAD) + 1:04d}"
    engine = make_engine(url)
    try:
        async with engine.begin() as db:
            await db.execute(sa.text("CREATE TABLE future_things (id INTEGER PRIMARY KEY)"))
            await db.execute(sa.text(f"UPDATE alembic_version SET version_num = '{newer}'"))
    finally:
        await engine.dispose()
    return newer


@pytest.mark.parametrize("command", [["worker"], ["web"], ["scheduler"], ["migrate"]], ids=" ".join)
async def test_a_version_older_than_its_database_refuses_to_start_and_changes_nothing(
    command: list[str], redis_url: str, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/parley.db"
    await upgrade(url, wait=0)
    newer = await migrated_by_a_newer_version(url)
    env = stack_env(redis_url, fake_llm, url, PARLEY_HTTP_PORT=str(free_port()))
    status, said = await parley(env, tmp_path, *command)
    assert status == 1, said
    lines = [line for line in said.splitlines() if line.startswith("parley:")]
    assert len(lines) == 1 and "Traceback" not in said, said
    assert f"schema at {newer}, newer than this version of Parley knows" in lines[0]
    assert f"`parley migrate {schema.HEAD} --down`" in lines[0]
    assert await scalar(url, "SELECT version_num FROM alembic_version") == newer
    assert await scalar(url, "SELECT COUNT(*) FROM future_things") == 0


async def test_a_running_web_process_stays_ready_when_a_newer_version_migrates(
    stack: Stack,
) -> None:
    """Migrations only add, so the processes of the version before serve on until the
    upgrade replaces them (the upgrade's order: docs/OPERATIONS.md, "Upgrades")."""
    async with stack.client() as client:
        assert (await client.get("/readyz")).status_code == 200
        await migrated_by_a_newer_version(stack.env["DATABASE_URL"])
        answer = await client.get("/readyz")
    assert answer.status_code == 200, answer.text
    assert answer.json()["checks"]["database"] == "ok"
