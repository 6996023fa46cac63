"""Backups, made and restored with the commands docs/OPERATIONS.md ("Backups") gives.

A deployment (Redis as the Compose file runs it, with AOF; SQLite or PostgreSQL) holds some
history: a conversation, a memory, a scheduled task not yet run, and a message waiting in a
session's mailbox while no worker runs. With the web process still serving, the database is
copied online (`parley backup` for SQLite; `pg_dump -Fc`) and Redis's AOF is rewritten
(`BGREWRITEAOF`) and its folder copied. Both are restored into fresh servers, the processes
start again on them, and: the history and the memory are there, the task fires, and the
waiting message is answered once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import subprocess
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from redis.asyncio import Redis

from adapters.platforms.targets import target_of
from bot.tasks.book import NewTask
from bot.vocabulary.envelope import Sender
from bot.vocabulary.schedule import parse_when
from tests.fakes.llm import FakeLLM, ToolCallSpec
from tests.support.chat_tasks import task_book
from tests.support.parley import run_parley
from tests.support.redis_server import RedisServer, free_port
from tests.support.schedulers import Schedulers
from tests.support.stack import (
    ROOT,
    Stack,
    database_for,
    idle,
    recorded,
    send,
    serving,
    stack_env,
    web_settings,
)
from tests.support.tasks import TASKS, Brain, is_run, rows
from tests.support.waiting import until

FACT = "Ann takes her coffee black"
WAITING = "what should I bring Ann?"
PROMPT = "call Ann"
COMPOSE_REDIS = ("--appendfsync", "everysec")  # and --appendonly yes, as RedisServer runs it


@contextlib.asynccontextmanager
async def deployment(redis: RedisServer, database_url: str, fake: FakeLLM, tmp: Path
                     ) -> AsyncIterator[Stack]:  # fmt: skip
    """The web app (in this process) on `redis` and `database_url`, serving until the block
    ends; workers are the test's to start."""
    env = stack_env(redis.url, fake, database_url, PARLEY_FILES_DIR=str(tmp / "files"))
    async with serving(Stack(redis.url, fake, tmp, env=env), web_settings(env), free_port()) as s:
        yield s


def redis_server(directory: Path) -> RedisServer:
    server = RedisServer(directory, *COMPOSE_REDIS)
    directory.mkdir(exist_ok=True)
    server.start()
    return server


def run(*command: str, env: dict[str, str] | None = None) -> str:
    """A backup command, as an operator types it; fails the test with what it said."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    if done.returncode != 0:
        pytest.fail(f"{command} failed ({done.returncode}): {done.stdout}{done.stderr}")
    return done.stdout


def libpq(database_url: str) -> str:
    """DATABASE_URL as PostgreSQL's own tools take it: without SQLAlchemy's driver."""
    return database_url.replace("postgresql+asyncpg://", "postgresql://", 1)


def back_up_database(database_url: str, backup: Path, bindir: Path | None) -> None:
    if database_url.startswith("sqlite"):  # `parley backup`, with the deployment's settings
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "DATABASE_URL": database_url}
        done = run_parley("backup", str(backup / "parley.db"), env=env, timeout=120)
        said = done.stdout
        assert done.returncode == 0, done
        assert said.startswith("backed up ") and "(schema " in said, said
    else:
        assert bindir is not None
        run(str(bindir / "pg_dump"), "-Fc", "-f", str(backup / "parley.dump"), libpq(database_url))


def restore_database(kind: str, backup: Path, fresh: str, bindir: Path | None) -> None:
    """Into `fresh`: a new SQLite path, or a new, empty PostgreSQL database."""
    if kind == "sqlite":
        shutil.copy(backup / "parley.db", fresh.split(":///", 1)[1])
    else:
        assert bindir is not None
        dump = str(backup / "parley.dump")
        run(str(bindir / "pg_restore"), "--no-owner", "-d", libpq(fresh), dump)


async def back_up_redis(redis: RedisServer, backup: Path) -> None:
    """BGREWRITEAOF, wait for it to end, copy the AOF's folder."""
    port = str(redis.port)
    await asyncio.to_thread(run, "redis-cli", "-p", port, "BGREWRITEAOF")

    async def rewritten() -> bool:
        said = await asyncio.to_thread(run, "redis-cli", "-p", port, "INFO", "persistence")
        return "aof_rewrite_in_progress:0" in said and "aof_rewrite_scheduled:0" in said

    await until(rewritten, "the AOF rewritten")
    await asyncio.to_thread(
        shutil.copytree, redis.directory / "appendonlydir", backup / "appendonlydir"
    )


async def submitted_while_no_worker_runs(stack: Stack, session: str) -> None:
    """A message the web process accepted (its answer stream began) that waits."""
    async with (
        stack.client() as client,
        client.stream("POST", f"/api/sessions/{session}/messages", json={"text": WAITING}) as r,
    ):
        assert r.status_code == 200


async def dead_letters(redis_url: str) -> int:
    async with Redis.from_url(redis_url) as redis:
        return int(await redis.llen("parley:dead"))


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
async def test_a_backup_restored_into_fresh_servers_keeps_history_tasks_and_waiting_messages(
    kind: str, fake_llm: FakeLLM, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    bindir = request.getfixturevalue("postgres_server").bindir if kind == "postgresql" else None
    brain = Brain(calls={"remember": [ToolCallSpec("remember", {"fact": FACT})]})
    fake_llm.responder = brain
    backup = tmp_path / "backup"
    backup.mkdir()
    first = redis_server(tmp_path / "redis-first")
    (tmp_path / "first").mkdir()
    database = database_for(kind, tmp_path / "first", request)
    try:
        async with deployment(first, database, fake_llm, tmp_path / "first") as stack:
            worker = await stack.start_worker_process()
            async with stack.client() as client:
                session = await stack.session(client)
                await send(client, session, f"please remember that {FACT}")
            async with task_book(stack) as book:
                now = datetime.now(UTC)
                schedule = parse_when("in 5 seconds", ZoneInfo("UTC"), now)
                new = NewTask(target_of(f"http:{session}"), Sender(id="http:local"), PROMPT,
                              "in 5 seconds", schedule, if_missed="run_once")  # fmt: skip
                task = await book.add(new, max_active=20, now=now)
            stack.kill(worker, signal.SIGTERM)
            assert await asyncio.wait_for(worker.wait(), 60) == 0
            await submitted_while_no_worker_runs(stack, session)
            back_up_database(database, backup, bindir)  # online: the web process serves
            await back_up_redis(first, backup)
    finally:
        first.stop()
    asked = len(fake_llm.requests)

    # Fresh servers: an empty Redis folder given the copied AOF, a new database.
    second_dir = tmp_path / "redis-second"
    second_dir.mkdir()
    shutil.copytree(backup / "appendonlydir", second_dir / "appendonlydir")
    second = redis_server(second_dir)
    (tmp_path / "second").mkdir()
    fresh = database_for(kind, tmp_path / "second", request)
    restore_database(kind, backup, fresh, bindir)
    try:
        async with deployment(second, fresh, fake_llm, tmp_path / "second") as stack:
            schedulers = Schedulers(second.url, stack.env, stack.tmp)
            try:
                await stack.start_worker_process()
                await schedulers.start()
                await until(lambda: brain.runs.get(PROMPT) == 1, "the task's run")
                record = await recorded(stack, session, 1)
                await idle(second.url)
                (stored,) = await rows(fresh, TASKS, id=task.id)
            finally:
                await schedulers.stop()
            assert await dead_letters(second.url) == 0
    finally:
        second.stop()
    after = fake_llm.requests[asked:]
    answered = [r for r in after if not is_run(r) and WAITING in r.last_user_text()]
    assert len(answered) == 1  # the waiting message, answered once
    history = str(answered[0].body["messages"])
    assert f"please remember that {FACT}" in history  # the conversation before the backup
    assert FACT in str(answered[0].body.get("system"))  # the memory, in its instructions
    assert stored.runs == 1
    texts = [m["text"] for m in record["recent"]]
    assert sum(WAITING in t for t in texts) == 1, texts
    assert any("Reminder: call Ann. #1" in t for t in texts), texts
