"""Each process says at start, once and loudly, when Redis keeps nothing on disk."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from redis.asyncio import Redis

from tests.fakes.llm import FakeLLM
from tests.support.redis_server import RedisServer
from tests.support.stack import Stack, stack_env, web_settings
from tests.support.waiting import until
from worker.persistence import check_persistence
from worker.web import make_app

NO_AOF = ("--appendonly", "no")


@pytest.fixture
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RedisServer]:
    """A Redis of its own, started with the options the test is parametrised with."""
    directory = tmp_path / "redis-data"
    directory.mkdir()
    running = RedisServer(directory, *request.param)
    running.start()
    yield running
    running.stop()


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ((), "aof"),
        ((*NO_AOF, "--save", "3600 1"), "rdb"),
        (NO_AOF, "none"),
        ((*NO_AOF, "--rename-command", "CONFIG", ""), "unknown"),  # managed Redis often does
    ],
    indirect=["server"],
)
async def test_persistence_is_read_where_redis_allows(
    server: RedisServer, expected: str, caplog: pytest.LogCaptureFixture
) -> None:
    redis = Redis.from_url(server.url)
    with caplog.at_level(logging.INFO, logger="worker.persistence"):
        assert await check_persistence(redis) == expected
    await redis.aclose()
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    if expected == "none":
        (warning,) = warnings
        assert "Redis persists nothing" in warning.getMessage()
        assert "restart loses accepted messages" in warning.getMessage()
    else:
        assert warnings == []


@pytest.mark.parametrize("server", [NO_AOF], indirect=True)
async def test_web_and_worker_warn_at_start_when_redis_persists_nothing(
    server: RedisServer, fake_llm: FakeLLM, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    env = stack_env(server.url, fake_llm, f"sqlite+aiosqlite:///{tmp_path}/parley.db")
    with caplog.at_level(logging.WARNING, logger="worker.persistence"):
        runner = web.AppRunner(await make_app(web_settings(env)))
        await runner.setup()
        await runner.cleanup()
    assert ["Redis persists nothing" in r.getMessage() for r in caplog.records] == [True]

    stack = Stack(server.url, fake_llm, tmp_path, env=env)
    await stack.start_worker_process()
    log = tmp_path / "worker-0.log"
    try:
        await until(lambda: b"Redis persists nothing" in log.read_bytes(), "the worker's warning")
        assert log.read_text().count("WARNING worker.persistence: Redis persists nothing") == 1
    finally:
        await stack.stop()
