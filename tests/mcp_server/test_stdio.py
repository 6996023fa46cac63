"""`parley mcp` over stdio, driven by the SDK's own client against a real process."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import time
from pathlib import Path

import pytest

from tests.mcp_server.support import DEADLINE, INITIALIZE, start, stdio_session, stop
from tests.support.parley import ParleyProcess
from worker.mcp_stdin import MAX_MESSAGE

pytestmark = pytest.mark.e2e
WORKER_ONLY = {
    *("schedule_task", "list_tasks", "cancel_task", "set_timezone"),
    *("remember", "forget", "recall"),
}


async def test_the_standard_tools_are_listed_and_the_worker_s_own_are_not(tmp_path: Path) -> None:
    async with stdio_session(tmp_path) as (session, started):
        assert started.server_info.name == "parley"
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert {"calculator", "current_time", "slow_write", "block_thread"} <= set(tools)
    assert not WORKER_ONLY & set(tools)
    assert "launch" not in tools  # sensitive: only with --sensitive
    calculator = tools["calculator"]
    assert calculator.input_schema["required"] == ["expression"]
    assert calculator.annotations is not None
    assert calculator.annotations.read_only_hint is True
    assert tools["slow_write"].annotations is not None
    assert tools["slow_write"].annotations.read_only_hint is False


async def test_sensitive_tools_are_offered_when_the_operator_asks(tmp_path: Path) -> None:
    async with stdio_session(tmp_path, "--sensitive") as (session, _):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        result = await session.call_tool("launch", {"target": "probe"})
    assert "launch" in tools
    assert tools["launch"].annotations is not None
    assert tools["launch"].annotations.destructive_hint is True
    assert not WORKER_ONLY & set(tools)
    assert not result.is_error
    assert result.content[0].text == "launched probe"  # type: ignore[union-attr]


async def test_calls_give_the_tools_real_results(tmp_path: Path) -> None:
    began = time.monotonic()
    async with stdio_session(tmp_path) as (session, _):
        result = await session.call_tool("calculator", {"expression": "2^100 + (2+3)*4"})
        first = time.monotonic() - began
        now = await session.call_tool("current_time", {"timezone": "Asia/Tokyo"})
        context = await session.call_tool("call_context", {})
    print(f"\nparley mcp over stdio: {first:.2f} s from start to the first tool result")
    assert not result.is_error
    assert result.content[0].text == str(2**100 + 20)  # type: ignore[union-attr]
    assert not now.is_error
    text = now.content[0].text  # type: ignore[union-attr]
    assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d JST \(UTC\+0900\)", text), text
    assert text.endswith("time zone Asia/Tokyo")
    assert context.content[0].text == "mcp:stdio mcp mcp"  # type: ignore[union-attr]


async def test_bad_arguments_and_unknown_tools_are_error_results(tmp_path: Path) -> None:
    async with stdio_session(tmp_path) as (session, _):
        missing = await session.call_tool("calculator", {})
        extra = await session.call_tool("calculator", {"expression": "1", "mode": "fast"})
        wrong = await session.call_tool("calculator", {"expression": "2 +* 3"})
        zone = await session.call_tool("current_time", {"timezone": "Mars/Olympus"})
        unknown = await session.call_tool("schedule_task", {"prompt": "hi", "when": "in 1 hour"})
    texts = [r.content[0].text for r in (missing, extra, wrong, zone, unknown)]  # type: ignore[union-attr]
    assert all(r.is_error for r in (missing, extra, wrong, zone, unknown)), texts
    assert texts[0] == "Invalid arguments for calculator: expression: Field required"
    assert texts[1].startswith("Invalid arguments for calculator: mode: Extra inputs")
    assert texts[2].startswith("Cannot evaluate '2 +* 3'")
    assert texts[3].startswith("Unknown time zone 'Mars/Olympus'")
    assert texts[4].startswith("Unknown tool 'schedule_task'. Available tools: ")
    assert "calculator" in texts[4] and "set_timezone" not in texts[4]


async def test_a_tool_past_its_timeout_is_an_error_result(tmp_path: Path) -> None:
    """A thread that never returns: the executor stops waiting at PARLEY_TOOL_TIMEOUT, and
    the server still answers (and exits) afterwards."""
    async with stdio_session(tmp_path, PARLEY_TOOL_TIMEOUT="1") as (session, _):
        began = time.monotonic()
        stuck = await session.call_tool("block_thread", {})
        waited = time.monotonic() - began
        after = await session.call_tool("calculator", {"expression": "6*7"})
    assert stuck.is_error
    text = stuck.content[0].text  # type: ignore[union-attr]
    assert text == "block_thread timed out after 1 s and was stopped."
    assert waited < DEADLINE / 2
    assert after.content[0].text == "42"  # type: ignore[union-attr]


async def _initialized(proc: ParleyProcess) -> dict[str, object]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    await proc.stdin.drain()
    line = await asyncio.wait_for(proc.stdout.readline(), DEADLINE)
    answer: dict[str, object] = json.loads(line)
    return answer


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_stops_it_promptly_while_the_client_holds_stdin_open(
    tmp_path: Path, sig: int
) -> None:
    proc = await start(tmp_path)
    assert (await _initialized(proc))["id"] == 1
    took = await stop(proc, sig)
    assert proc.returncode == 0
    assert took < 10, f"{took:.1f} s to stop"
    assert proc.stderr is not None
    assert "Traceback" not in (await proc.stderr.read()).decode()


async def test_it_stops_when_stdin_closes_and_stdout_carries_only_protocol(
    tmp_path: Path,
) -> None:
    """With every log line on (DEBUG), stdout still holds nothing but JSON-RPC messages."""
    proc = await start(tmp_path, PARLEY_LOG_LEVEL="DEBUG")
    assert proc.stdin is not None and proc.stdout is not None
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "calculator", "arguments": {"expression": "7*6"}},
    }
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, call]
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in lines))
    await proc.stdin.drain()
    first = [await asyncio.wait_for(proc.stdout.readline(), DEADLINE) for _ in range(2)]
    proc.stdin.close()
    out, err = await asyncio.wait_for(proc.communicate(), DEADLINE)
    assert proc.returncode == 0, err.decode()[-2000:]
    messages = [json.loads(line) for line in b"".join(first).decode().splitlines()]
    assert not out  # nothing more after the answers
    assert [m["id"] for m in messages] == [1, 2]
    assert messages[1]["result"]["content"][0]["text"] == "42"
    assert err  # the logs went somewhere: to stderr


async def test_every_request_read_before_stdin_closed_is_answered(tmp_path: Path) -> None:
    """Requests piped in at once and stdin closed behind them, as a shell pipe does: each is
    answered before the process exits, a call that takes a while included."""
    proc = await start(tmp_path)
    assert proc.stdin is not None
    written = tmp_path / "written"
    requests = [
        INITIALIZE,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "slow_write", "arguments": {"path": str(written), "seconds": 1}},
        },
    ]
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in requests))
    proc.stdin.close()
    out, err = await asyncio.wait_for(proc.communicate(), DEADLINE)
    assert proc.returncode == 0, err.decode()[-2000:]
    answers = {m["id"]: m for m in map(json.loads, out.decode().splitlines())}
    assert sorted(answers) == [1, 2, 3], out.decode()[-2000:]
    assert "calculator" in [tool["name"] for tool in answers[2]["result"]["tools"]]
    assert answers[3]["result"]["content"][0]["text"] == "written"
    assert written.read_text() == "written\n"


async def test_a_line_past_the_limit_is_dropped_and_the_next_one_answered(
    tmp_path: Path,
) -> None:
    proc = await start(tmp_path)
    assert proc.stdin is not None
    proc.stdin.write(b'{"jsonrpc": "2.0", "id": 9, "method": "ping", "x": "' + b"a" * MAX_MESSAGE)
    proc.stdin.write(b'"}\n')
    assert (await _initialized(proc))["id"] == 1
    took = await stop(proc)
    assert proc.returncode == 0 and took < 10
    assert proc.stderr is not None
    err = (await proc.stderr.read()).decode()
    assert f"dropped a message longer than {MAX_MESSAGE} bytes from stdin" in err
