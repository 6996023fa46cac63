"""The web process's Redis pool stays bounded, and gives back connections nobody uses."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio import Redis

from bot.config import Settings
from bot.redis_types import done
from worker.redis_pool import IdleClosingPool, open_pool


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
