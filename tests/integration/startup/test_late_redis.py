"""Compose starts every service at once: a `parley web` process started before its Redis
says it waits for it, then serves once Redis is up (`worker/redis_pool.py`)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx

from tests.fakes.llm import FakeLLM
from tests.support.parley import start_parley
from tests.support.redis_server import RedisServer, free_port
from tests.support.stack import stack_env
from tests.support.waiting import until


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
        proc = await start_parley("web", env=env, cwd=tmp_path, stdout=out, stderr=out)
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
