"""Redis restarted under load: no process of Parley's exits, and what was accepted is answered.

Redis runs as the Compose file runs it (AOF, `appendfsync everysec`). A `parley web` process,
two `parley worker` processes and a `parley scheduler` run against it while people keep
writing (`tests.support.traffic`: long streamed replies, tool calls) and turns run. Redis is
stopped mid-stream, seen to be away (`/readyz` names it), and started again from its AOF.
Every process lives on; every message accepted, before, during (a person whose message got
no answer sends it again, under the same id) and after, is answered once and in order; the
web process is ready again and takes a message through its API; the scheduler leads again.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import httpx
import pytest
from arq.connections import RedisSettings, create_pool

from bot.mailbox.inbox import Mailbox
from tests.fakes.llm import FakeLLM
from tests.support.redis_server import RedisServer, free_port
from tests.support.schedulers import Schedulers
from tests.support.stack import Stack, idle, stack_env
from tests.support.traffic import Ledger, Traffic, check_conversations
from tests.support.waiting import until
from tests.support.web_process import web_process

SESSIONS = 4


@pytest.fixture
async def compose_redis(tmp_path: Path) -> AsyncIterator[RedisServer]:
    """A Redis of its own with the Compose file's persistence (restarting the shared one
    would replay every earlier test's writes from its AOF)."""
    server = RedisServer(tmp_path / "redis-data", "--appendfsync", "everysec")
    server.directory.mkdir()
    server.start()
    try:
        yield server
    finally:
        server.stop()


async def readiness(base: str) -> dict[str, str]:
    """What the web process's /readyz says of each check."""
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        checks: dict[str, str] = (await client.get("/readyz")).json()["checks"]
        return checks


async def redis_said(base: str, state: str) -> bool:
    checks = await readiness(base)
    return (checks["redis"] == "ok") == (state == "ok")


@pytest.mark.slow(25)  # a web process, two workers and a scheduler started, Redis restarted
async def test_redis_restarted_under_load_no_process_exits_and_nothing_is_lost(
    compose_redis: RedisServer, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    effects = tmp_path / "effects"
    effects.mkdir()
    ledger = Ledger(effects)
    fake_llm.responder = ledger
    database = f"sqlite+aiosqlite:///{tmp_path}/parley.db"
    env = stack_env(compose_redis.url, fake_llm, database, PARLEY_HTTP_PORT=str(free_port()))
    stack = Stack(compose_redis.url, fake_llm, tmp_path, env=env)
    schedulers = Schedulers(compose_redis.url, env, tmp_path)
    async with contextlib.AsyncExitStack() as running:
        running.push_async_callback(stack.stop)
        running.push_async_callback(schedulers.stop)
        base = await running.enter_async_context(web_process(env, tmp_path, tmp_path / "web.log"))
        stack.base_url = base
        workers = [await stack.start_worker_process() for _ in range(2)]
        scheduler = await schedulers.start()
        await schedulers.wait_for_leader()
        pool = await create_pool(RedisSettings.from_dsn(compose_redis.url))
        running.push_async_callback(pool.aclose)
        traffic = Traffic(Mailbox(pool, pool), SESSIONS)
        sending = asyncio.create_task(traffic.run(at_least=4))
        running.callback(sending.cancel)
        await until(lambda: ledger.calls >= SESSIONS, "turns running")
        await asyncio.to_thread(compose_redis.stop)
        await until(partial(redis_said, base, "away"), "/readyz naming Redis")
        await asyncio.to_thread(compose_redis.start)
        await until(partial(redis_said, base, "ok"), "/readyz ready again")
        calls = ledger.calls
        await until(lambda: ledger.calls > calls + SESSIONS, "turns running after the restart")
        traffic.stop.set()
        await asyncio.wait_for(sending, 120)
        for s in range(SESSIONS):
            await until(partial(_drained, traffic, s), f"session {s}'s answers", within=120)
        await idle(compose_redis.url)
        assert ledger.violations == []
        checked = await check_conversations(traffic, compose_redis.url, effects, database)
        assert checked == []
        await _answered_through_the_api(stack)
        assert await schedulers.wait_for_leader() is scheduler
        exited = {
            name: proc.returncode
            for name, proc in [("worker 0", workers[0]), ("worker 1", workers[1]),
                               ("scheduler", scheduler)]
            if proc.returncode is not None
        }  # fmt: skip
        assert exited == {}
        print(f"\n{sum(traffic.sent.values())} messages answered across the Redis restart")


async def _answered_through_the_api(stack: Stack) -> None:
    """A message sent to the web process after the restart is answered (it reconnected)."""
    async with stack.client() as client:
        session = await stack.session(client)
        answer = await client.post(f"/api/sessions/{session}/messages", json={"text": "s99 m0"})
        assert answer.status_code == 200, answer.text
        assert "ans s99 m0" in answer.text


async def _drained(traffic: Traffic, s: int) -> bool:
    return await traffic.mailbox.pending(traffic.session(s)) == 0
