"""A real worker with PARLEY_MCP_CONFIG: the fake model calls the reference time server's
tool and the reply carries its answer; a turn in the worker's first seconds waits for its
servers; a worker killed with SIGKILL takes its servers, and what they started, with it.
Default settings throughout."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time
from asyncio.subprocess import PIPE
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.mcp.status import mcp_status
from tests.fakes.llm import FakeLLM, RecordedRequest, Reply, ToolCallSpec
from tests.support.parley import start_parley
from tests.support.stack import Stack, send, stack_env, texts
from tests.support.waiting import until

pytestmark = pytest.mark.e2e
TIME_SERVER = {"command": sys.executable, "args": ["-m", "mcp_server_time"], "trust": "allow"}
UNRULY = Path(__file__).parent / "servers" / "unruly.py"


def use_servers(stack: Stack, tmp_path: Path, servers: dict[str, Any]) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    stack.env["PARLEY_MCP_CONFIG"] = str(config)


def stat(pid: int) -> list[str] | None:
    """/proc's fields of `pid` after its name (state, ppid, pgrp, session, ...); None for a
    process that is gone or a zombie nobody reaps (it runs nothing)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None if fields[0] == "Z" else fields


def processes() -> dict[int, list[str]]:
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (fields := stat(int(name))) is not None:
            found[int(name)] = fields
    return found


def in_sessions_led_by_children_of(parent: int) -> set[int]:
    """The processes in the sessions that children of `parent` lead (its MCP servers')."""
    running = processes()
    leaders = {pid for pid, f in running.items() if int(f[1]) == parent and int(f[3]) == pid}
    return {pid for pid, f in running.items() if int(f[3]) in leaders}


async def offered_within(redis_url: str) -> float:
    """Seconds until some worker says the time server is connected."""
    redis = Redis.from_url(redis_url)

    async def connected() -> bool:
        status = (await mcp_status(redis)).get("time")
        return status is not None and status.state == "connected"

    try:
        return await until(connected, "the time server connected")
    finally:
        await redis.aclose()


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
    worker = await start_parley("worker", env=env, cwd=tmp_path, stderr=PIPE, stdout=PIPE)
    async with asyncio.timeout(60):
        out, err = await worker.communicate()
    assert worker.returncode == 2, (out, err)
    assert err.decode().splitlines() == [
        f'parley: configuration error: PARLEY_MCP_CONFIG: {config}: server "time": "trust" '
        'must be one of "allow", "ask" or "deny"'
    ]


async def test_a_turn_in_the_workers_first_seconds_waits_for_its_servers_tools(
    stack: Stack, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The server answers nothing until the test opens its gate, after the turn has come."""
    caplog.set_level(logging.INFO, logger="bot.mcp.source")
    gate = tmp_path / "gate"
    slow = {"command": sys.executable, "args": [str(UNRULY), "gated", str(gate)], "trust": "allow"}
    use_servers(stack, tmp_path, {"slow": slow})
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="hello"))

    def waiting() -> bool:
        return any(r.getMessage().startswith("turns wait") for r in caplog.records)

    async with stack.client() as client:
        session = await stack.session(client)
        sending = asyncio.create_task(send(client, session, "hi"))
        await until(lambda: waiting() or stack.fake.requests, "the turn waiting or its model call")
        assert not stack.fake.requests, "the model was called before the server had connected"
        gate.touch()
        events = await sending
    assert texts(events) == "hello"
    offered = [tool["name"] for tool in stack.fake.requests[0].body["tools"]]
    assert "slow__huge" in offered


async def test_a_worker_killed_with_sigkill_takes_its_servers_and_their_children_with_it(
    stack: Stack, tmp_path: Path
) -> None:
    """One server hangs without answering, ignores SIGTERM and started a child, behind a
    shell (as npx starts node); the other is the reference time server, connected."""
    pids = tmp_path / "pids"
    hung = {"command": "sh", "args": ["-c", f"{sys.executable} {UNRULY} hang {pids}; true"]}
    use_servers(stack, tmp_path, {"hung": hung, "time": TIME_SERVER})
    worker = await stack.start_worker_process()
    await offered_within(stack.redis_url)
    await until(pids.exists, "the hung server's processes")
    started = in_sessions_led_by_children_of(worker.pid)
    try:
        assert {int(pid) for pid in pids.read_text().split()} <= started
        assert len(started) >= 4  # the shell, the hung server, its child, the time server
        stack.kill(worker)
        await worker.wait()
        killed = time.monotonic()
        await until(lambda: not any(stat(pid) for pid in started), "the servers' processes gone")
        print(f"\n{len(started)} processes gone {time.monotonic() - killed:.2f} s after the kill")
    finally:
        for pid in started:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
