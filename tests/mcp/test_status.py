"""Each worker writes how its MCP servers are doing to Redis; `mcp_status` merges the live
workers' views for operators."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest
from redis.asyncio import Redis

from bot.mcp.status import TTL, ServerStatus, mcp_status, publish, worker_key, write_status
from bot.redis import keys
from tests.mcp.support import offered, running, toolbox
from tests.support.waiting import until

pytestmark = pytest.mark.e2e


@pytest.fixture
def redis(redis_client: Redis) -> Redis:
    return redis_client


async def connected(redis: Redis) -> dict[str, ServerStatus]:
    """The merged view, once it says the toolbox is connected."""
    seen: dict[str, ServerStatus] = {}

    async def says_so() -> bool:
        seen.clear()
        seen.update(await mcp_status(redis))
        return "box" in seen and seen["box"].state == "connected"

    await until(says_so, "the toolbox connected in the merged view")
    return seen


async def test_workers_views_merge_and_a_stopped_worker_leaves_none(redis: Redis) -> None:
    other = keys.mcp_status("elsewhere:4242:0badcafe")
    await write_status(
        redis,
        other,
        {
            "box": ServerStatus("failed", error="cannot start 'x'", since=time.time()),
            "remote": ServerStatus("failed", error="HTTP 401", since=time.time()),
        },
    )
    servers_config = {"box": toolbox(), "off": {**toolbox(), "disabled": True}}
    async with running(servers_config) as servers:
        writing = asyncio.create_task(publish(redis, servers, worker_key()))
        try:
            await until(offered(servers, "box__echo"), "the toolbox")

            seen = await connected(redis)
            assert 0 < await redis.ttl(worker_key()) <= TTL
        finally:
            writing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writing
    assert sorted(seen) == ["box", "off", "remote"]
    assert "box__echo" in seen["box"].tools and "box__wait" in seen["box"].tools
    assert (seen["off"].state, seen["remote"].state, seen["remote"].error) == (
        "disabled",
        "failed",
        "HTTP 401",
    )
    assert not await redis.exists(worker_key())  # removed when the worker stops
    left = await mcp_status(redis)
    assert {name: status.state for name, status in left.items()} == {
        "box": "failed",
        "remote": "failed",
    }
    await redis.delete(other)
