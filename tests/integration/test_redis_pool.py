"""The web process's Redis pool stays bounded, gives back connections nobody uses, and waits
for a Redis that starts late."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import httpx
import pytest
from redis.asyncio import Redis

from bot.config.settings import Settings
from bot.redis.results import done
from tests.fakes.llm import FakeLLM
from tests.support.redis_server import RedisServer, free_port
from tests.support.stack import stack_env
from tests.support.waiting import until
from worker.redis_pool import IdleClosingPool, RedisUnavailable, open_pool


async def test_a_burst_is_bounded_and_its_connections_are_closed_when_idle(
    redis_url: str,
) -> None:
    settings = Settings(_env_file=None, redis_url=redis_url, redis_connections=5)
    pool_client = await open_pool(settings.model_copy(update={"redis_idle_timeout": 0.5}))
    pool = pool_client.connection_pool
    assert isinstance(pool, IdleClosingPool)
    observer = Redis.from_url(redis_url, single_connection_client=True)

    async def connected() -> int:
        return int((await observer.info("clients"))["connected_clients"]) - 1

    baseline = await connected()
    started = time.monotonic()
    await asyncio.gather(*(done(pool_client.blpop(["nothing"], timeout=1)) for _ in range(20)))
    took = time.monotonic() - started
    during = await connected()
    await asyncio.sleep(0.6)
    closed = await pool.close_idle()
    after = await connected()
    print(
        f"\n20 commands of 1 s at once on a pool of 5: {took:.1f} s; connections "
        f"{baseline} before, {during} after the burst, {after} once idle ({closed} closed)"
    )
    assert during <= baseline + 5 and took >= 3  # they waited for each other, not failed
    assert after <= baseline and closed >= 4
    assert await pool_client.ping()  # and it connects again when needed
    await pool_client.aclose()
    await observer.aclose()


async def test_parley_web_waits_for_a_redis_that_starts_late(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """Compose starts every service at once: `parley web` says it waits, then serves."""
    server = RedisServer(tmp_path / "redis")
    server.directory.mkdir()
    port = free_port()
    env = stack_env(server.url, fake_llm, PARLEY_HTTP_PORT=str(port))
    log = tmp_path / "web.log"
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "worker", "web", env=env, cwd=tmp_path, stdout=out, stderr=out
        )
    try:
        await until(lambda: "not ready" in log.read_text(), "`parley web` saying it waits")
        assert proc.returncode is None and "Traceback" not in log.read_text()
        await asyncio.to_thread(server.start)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:

            async def healthy() -> bool:
                try:
                    return (await client.get("/healthz")).status_code == 200
                except httpx.TransportError:
                    return False

            await until(healthy, "`parley web` serving once Redis is up", within=90)
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 60)
        server.stop()
    assert "Traceback" not in log.read_text(), log.read_text()


async def test_a_redis_that_never_answers_is_one_line_without_its_password() -> None:
    url = f"redis://:hunter2-secret@127.0.0.1:{free_port()}/0"
    with pytest.raises(RedisUnavailable) as refused:
        await open_pool(Settings(_env_file=None, redis_url=url), wait=1)
    line = str(refused.value)
    assert line.startswith("no Redis at redis://:***@127.0.0.1:") and "\n" not in line
    assert "hunter2" not in line
