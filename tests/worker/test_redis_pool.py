"""The web process's Redis pool stays bounded, gives back connections nobody uses, and says
in one line, without the password, that no Redis answers. (A `parley web` process that waits
for a Redis starting late: tests/integration/startup/test_late_redis.py.)"""

from __future__ import annotations

import asyncio
import time

import pytest
from redis.asyncio import Redis

from bot.config.settings import Settings
from bot.redis.results import done
from tests.support.redis_server import free_port
from worker.redis_connections import IdleClosingPool
from worker.redis_pool import RedisUnavailable, open_pool


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


async def test_a_redis_that_never_answers_is_one_line_without_its_password() -> None:
    url = f"redis://:hunter2-secret@127.0.0.1:{free_port()}/0"
    with pytest.raises(RedisUnavailable) as refused:
        await open_pool(Settings(_env_file=None, redis_url=url), wait=1)
    line = str(refused.value)
    assert line.startswith("no Redis at redis://:***@127.0.0.1:") and "\n" not in line
    assert "hunter2" not in line
