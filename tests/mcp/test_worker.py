"""A real worker with PARLEY_MCP_CONFIG naming the reference time server: the fake model
calls the server's tool, and the reply carries its answer. Default timeouts throughout."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from asyncio.subprocess import PIPE
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.mcp.status import mcp_status
from tests.fakes.llm import FakeLLM, RecordedRequest, Reply, ToolCallSpec
from tests.support.stack import Stack, send, stack_env, texts

pytestmark = pytest.mark.e2e
TIME_SERVER = {"command": sys.executable, "args": ["-m", "mcp_server_time"], "trust": "allow"}


async def offered_within(redis_url: str, within: float = 60) -> float:
    """Seconds until some worker says the time server is connected."""
    redis = Redis.from_url(redis_url)
    started = time.monotonic()
    try:
        while time.monotonic() - started < within:
            status = (await mcp_status(redis)).get("time")
            if status is not None and status.state == "connected":
                return time.monotonic() - started
            await asyncio.sleep(0.05)
    finally:
        await redis.aclose()
    raise AssertionError(f"the time server was not connected after {within:g} s")


async def test_the_model_calls_an_mcp_tool_and_the_reply_has_its_answer(
    stack: Stack, tmp_path: Path
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"time": TIME_SERVER}}))
    stack.env["PARLEY_MCP_CONFIG"] = str(config)
    started = time.monotonic()
    offering = asyncio.create_task(offered_within(stack.redis_url))
    await stack.start_worker()
    ready = time.monotonic() - started
    offered = await offering
    print(f"\nworker ready {ready:.2f} s after its start; time tools offered at {offered:.2f} s")

    def answer(request: RecordedRequest) -> Reply:
        (result,) = request.tool_results()
        return Reply(text=f"Here you are: {result[1]}")

    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("time__get_current_time", {"timezone": "Asia/Tokyo"})]),
        answer,
    )
    async with stack.client() as client:
        session = await stack.session(client)
        events = await send(client, session, "what time is it in Tokyo?")
    first = stack.fake.requests[0].body
    assert "time__get_current_time" in [tool["name"] for tool in first["tools"]]
    shown = texts(events)
    assert shown.startswith('Here you are: <untrusted-data source="time__get_current_time">')
    assert '"timezone": "Asia/Tokyo"' in shown and "+09:00" in shown
    assert not [e for e in events if e["type"] == "confirmation_required"]  # trust "allow"


async def test_a_mistake_in_the_file_stops_the_worker_with_one_line(
    redis_url: str, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"time": {**TIME_SERVER, "trust": "sometimes"}}}))
    env = stack_env(redis_url, fake_llm, PARLEY_MCP_CONFIG=str(config))
    worker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "worker", "worker", env=env, cwd=tmp_path, stderr=PIPE, stdout=PIPE
    )
    async with asyncio.timeout(60):
        out, err = await worker.communicate()
    assert worker.returncode == 2, (out, err)
    assert err.decode().splitlines() == [
        f'parley: configuration error: PARLEY_MCP_CONFIG: {config}: server "time": "trust" '
        'must be one of "allow", "ask" or "deny"'
    ]
