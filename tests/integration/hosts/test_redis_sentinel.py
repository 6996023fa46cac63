"""Parley through Redis Sentinel: the web process and a worker process find the master by
asking the sentinels; after a failover (SENTINEL FAILOVER, or the master killed with a
replica in place) the next turn is answered on the new master, and the scheduler leads
there again, no process having exited. The web process's pool keeps its bounds behind the
sentinels too, and closes its connections to them with it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import pytest
from redis.asyncio import Redis
from redis.asyncio.sentinel import SentinelManagedConnection

from bot.redis import keys
from bot.redis.results import done
from tests.fakes.llm import FakeLLM, Reply
from tests.support.redis_sentinel import SentinelGroup
from tests.support.redis_server import free_port
from tests.support.schedulers import Schedulers
from tests.support.stack import (
    Stack,
    env_settings,
    recorded,
    send,
    serving,
    stack_env,
    texts,
    web_settings,
)
from tests.support.waiting import until
from worker import redis_connections
from worker.redis_connections import SentinelIdleClosingPool
from worker.redis_pool import RedisUnavailable, open_pool


def started(directory: Path) -> SentinelGroup:
    """A running group, stopped if it did not come up; tried twice, because each server's
    port is chosen free before it binds it, and another test's server may take it between."""
    for attempt in (1, 2):
        group = SentinelGroup(directory / f"try-{attempt}")
        try:
            group.start()
            return group
        except AssertionError:
            group.stop()
            if attempt == 2:
                raise
    raise AssertionError("not reached")


@pytest.fixture
async def sentinels(tmp_path: Path) -> AsyncIterator[SentinelGroup]:
    group = await asyncio.to_thread(started, tmp_path / "sentinel")
    try:
        yield group
    finally:
        group.stop()


@pytest.fixture
async def sentinel_stack(
    sentinels: SentinelGroup, fake_llm: FakeLLM, tmp_path: Path
) -> AsyncIterator[Stack]:
    env = stack_env(
        sentinels.master.url,
        fake_llm,
        f"sqlite+aiosqlite:///{tmp_path}/parley.db",
        PARLEY_WORKSPACE_DIR=str(tmp_path / "workspaces"),
        PARLEY_FILES_DIR=str(tmp_path / "files"),
        **sentinels.env(),  # REDIS_URL's host unused: the sentinels name the master
    )
    built = Stack(sentinels.master.url, fake_llm, tmp_path, env=env)
    async with serving(built, web_settings(env), free_port()) as running:
        yield running


@pytest.mark.e2e
@pytest.mark.parametrize("kill", [False, True], ids=["sentinel-failover", "master-killed"])
async def test_the_next_turn_after_a_failover_is_answered(
    sentinel_stack: Stack, sentinels: SentinelGroup, kill: bool
) -> None:
    worker = await sentinel_stack.start_worker_process()
    sentinel_stack.fake.enqueue(Reply(text="Before the failover."), Reply(text="After it."))
    async with sentinel_stack.client() as client:
        session = await sentinel_stack.session(client)
        assert texts(await send(client, session, "one")) == "Before the failover."
        old = sentinels.master.port
        new = await asyncio.to_thread(sentinels.failover, kill=kill)
        assert new != old
        events = await send(client, session, "two")
        assert texts(events) == "After it."
        assert events[-1]["type"] == "completed", events[-3:]
    assert worker.returncode is None  # the worker followed the master, never exited
    # the second turn saw the first: the session's state lives on the new master
    assert "Before the failover." in str(sentinel_stack.fake.requests[-1].body["messages"])
    assert (await recorded(sentinel_stack, session, 4))["messages"] == 4
    master = Redis(port=new)

    async def beating() -> bool:  # a worker started over keeps a key of a new id
        return bool([key async for key in master.scan_iter(keys.worker("*"))])

    try:  # the worker keeps its liveness key alive on the new master
        await until(beating, "the worker's liveness key on the new master")
    finally:
        await master.aclose()


async def test_a_pool_follows_the_master_before_the_old_one_is_demoted(
    sentinels: SentinelGroup,
) -> None:
    """After SENTINEL FAILOVER the old master takes writes for some 10 s more, and loses them
    when it becomes a replica. A pool's first command once its lookup is due (every
    `FOLLOW_S`) reaches the new master, and a connection busy across the switch is closed
    when it comes back rather than kept for the next command."""
    client = redis_connections.client(env_settings(sentinels.env()))
    old, holder = sentinels.master.port, Redis(port=sentinels.master.port)
    try:
        await asyncio.gather(client.set("before", 1), client.set("before", 1))  # two idle
        busy = asyncio.create_task(done(client.blpop(["held"], timeout=0)))
        await until(lambda: blocked(holder), "the BLPOP waiting on the old master")
        new = await asyncio.to_thread(sentinels.promote)
        await asyncio.sleep(redis_connections.FOLLOW_S)  # the pool's lookup falls due
        await client.set("after", 2)
        assert await holder.get("after") is None
        async with Redis(port=new) as reached:
            assert await reached.get("after") == b"2"
        await done(holder.lpush("held", "x"))  # the old master, still taking writes, frees it
        assert list(await busy) == [b"held", b"x"]
        pool = client.connection_pool
        held = cast(list[SentinelManagedConnection], pool._available_connections)
        assert {c.port for c in held if c.is_connected} == {new}
        assert old != new
    finally:
        await holder.aclose()
        await client.aclose()


async def blocked(redis: Redis) -> bool:
    return int((await redis.info("clients"))["blocked_clients"]) == 1


async def clients_of(sentinel: Redis) -> int:
    """The sentinel's clients but the other sentinels (which link up when they like)."""
    listed = await sentinel.client_list()
    return sum(1 for c in listed if not str(c.get("name", "")).startswith("sentinel-"))


async def test_the_web_pool_stays_bounded_behind_the_sentinels(
    sentinels: SentinelGroup,
) -> None:
    env = sentinels.env() | {"PARLEY_REDIS_CONNECTIONS": "4"}
    settings = env_settings(env)
    asked = Redis(port=sentinels.sentinels[0].port, single_connection_client=True)
    sentinel_clients = await clients_of(asked)
    client = await open_pool(settings)
    observer = Redis(port=sentinels.master.port, single_connection_client=True)
    try:
        assert isinstance(client.connection_pool, SentinelIdleClosingPool)
        before = int((await observer.info("clients"))["connected_clients"])
        await asyncio.gather(*(done(client.blpop(["nothing"], timeout=1)) for _ in range(12)))
        during = int((await observer.info("clients"))["connected_clients"])
        assert during - before <= 4
        assert len(client.connection_pool._available_connections) == 4
    finally:
        await observer.aclose()
        await client.aclose()

    async def let_go() -> bool:
        return await clients_of(asked) == sentinel_clients

    await until(let_go, "the pool's connections to the sentinel closed with it")
    await asked.aclose()


async def test_no_sentinel_answering_is_one_line_naming_them(tmp_path: Path) -> None:
    port = free_port()
    settings = env_settings(
        {
            "REDIS_URL": "redis://:pw-of-the-master@unused/0",
            "PARLEY_REDIS_SENTINELS": f"127.0.0.1:{port}",
            "PARLEY_REDIS_SENTINEL_MASTER": "parley",
        }
    )
    with pytest.raises(RedisUnavailable) as caught:
        await open_pool(settings, wait=0.5)
    said = str(caught.value)
    assert said.startswith(f"no Redis at the master 'parley' of the sentinels 127.0.0.1:{port} (")
    assert "\n" not in said and "pw-of-the-master" not in said


@pytest.mark.e2e
async def test_the_scheduler_leads_again_on_the_new_master(
    sentinels: SentinelGroup, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    env = stack_env(
        sentinels.master.url,
        fake_llm,
        f"sqlite+aiosqlite:///{tmp_path}/parley.db",
        **sentinels.env(),
    )
    before = Schedulers(sentinels.master.url, env, tmp_path)
    scheduler = await before.start()
    try:
        assert await before.wait_for_leader() is scheduler
        new = await asyncio.to_thread(sentinels.failover, kill=True)
        after = Schedulers(f"redis://127.0.0.1:{new}/0", env, tmp_path)
        after.processes = before.processes
        assert await after.wait_for_leader() is scheduler  # the same process, leading again
        assert scheduler.returncode is None
    finally:
        await before.stop()
