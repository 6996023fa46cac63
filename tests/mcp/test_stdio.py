"""MCP servers run as child processes: the reference time server, and a toolbox built with
the SDK that crashes, waits, and shows its environment, all called through the executor."""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
import time
from pathlib import Path

import pytest

from tests.mcp.support import (
    TOOLBOX,
    call,
    executor,
    offered,
    running,
    time_server,
    toolbox,
)
from tests.support.waiting import until

pytestmark = pytest.mark.e2e
SERVER_LOG = "bot.mcp.server"


def about(caplog: pytest.LogCaptureFixture, server: str, level: int) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == SERVER_LOG and r.levelno == level and f"server {server} " in r.getMessage()
    ]


async def test_the_reference_time_server_answers_through_the_executor() -> None:
    async with running({"time": time_server()}) as servers:
        took = await until(offered(servers, "time__get_current_time"), "the time tools")
        print(f"\nmcp-server-time over stdio: tools offered {took:.2f} s after the start")
        assert sorted(servers.tools()) == ["time__convert_time", "time__get_current_time"]
        assert servers.tools()["time__get_current_time"].sensitive  # trust "ask" by default
        runner = executor(servers)
        outcome = await call(runner, "time__get_current_time", timezone="Asia/Tokyo")
        assert not outcome.is_error, outcome.content
        assert outcome.content.startswith('<untrusted-data source="time__get_current_time">')
        answer = json.loads(outcome.content.split("\n", 1)[1].rsplit("\n", 1)[0])
        assert answer["timezone"] == "Asia/Tokyo" and answer["datetime"].endswith("+09:00")
        wrong = await call(runner, "time__get_current_time", zone="Asia/Tokyo")
        assert wrong.is_error and "'timezone' is a required property" in wrong.content
        unknown = await call(runner, "time__get_current_time", timezone="Mars/Olympus")
        assert unknown.is_error and "Mars/Olympus" in unknown.content


async def test_a_crash_mid_call_ends_the_call_withdraws_the_tools_and_the_server_returns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=SERVER_LOG)
    async with running({"box": toolbox(), "time": time_server()}) as servers:  # default backoff
        await until(offered(servers, "box__crash", "time__get_current_time"), "the tools")
        runner = executor(servers)
        started = time.monotonic()
        outcome = await call(runner, "box__crash")
        ended = time.monotonic() - started
        assert outcome.is_error and "the MCP server box stopped during the call" in outcome.content
        assert ended < 10, f"the call ended {ended:.1f} s after the crash, not at once"
        assert not any(name.startswith("box__") for name in servers.tools())
        assert servers.status()["box"].state in ("failed", "connecting")
        back = await until(offered(servers, "box__echo"), "the toolbox back")
        print(f"\ncrashed call ended after {ended:.2f} s; the toolbox was back {back:.2f} s later")
        echoed = await call(runner, "box__echo", text="still here")
        assert not echoed.is_error and "still here" in echoed.content
        time_answer = await call(runner, "time__get_current_time", timezone="UTC")
        assert not time_answer.is_error  # the other server never noticed
    (warning,) = about(caplog, "box", logging.WARNING)
    assert "the connection closed" in warning and "crashing on purpose" in warning
    assert len(about(caplog, "box", logging.INFO)) == 2  # connected, and back


async def test_the_per_server_timeout_ends_a_slow_call_and_the_session_goes_on() -> None:
    async with running({"box": toolbox(timeout=1)}) as servers:
        await until(offered(servers, "box__wait"), "the toolbox")
        runner = executor(servers)
        started = time.monotonic()
        slow = await call(runner, "box__wait", seconds=60)
        assert slow.is_error and slow.content == "box__wait timed out after 1 s and was stopped."
        assert time.monotonic() - started < 15
        quick = await call(runner, "box__wait", seconds=0)
        assert not quick.is_error and "waited 0 s" in quick.content
        assert servers.status()["box"].state == "connected"


@pytest.mark.slow  # waits out the default
async def test_a_server_without_a_timeout_of_its_own_has_the_default_tool_timeout() -> None:
    async with running({"box": toolbox()}) as servers:
        await until(offered(servers, "box__wait"), "the toolbox")
        slow = await call(executor(servers), "box__wait", seconds=120)
        assert slow.is_error and slow.content == "box__wait timed out after 30 s and was stopped."
        assert servers.status()["box"].state == "connected"


async def test_a_server_that_cannot_start_is_reported_once_and_retried(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The program appears later: the retries find it, while the other server works."""
    program = tmp_path / "late-server"
    caplog.set_level(logging.INFO, logger=SERVER_LOG)
    async with running({"late": {"command": str(program)}, "box": toolbox()}) as servers:
        await until(lambda: servers.status()["late"].state == "failed", "the failure")
        assert "cannot start" in (servers.status()["late"].error or "")
        await until(offered(servers, "box__echo"), "the toolbox")
        assert not (await call(executor(servers), "box__echo", text="hi")).is_error
        program.write_text(f"#!/bin/sh\nexec {sys.executable} {TOOLBOX}\n")
        program.chmod(program.stat().st_mode | stat.S_IEXEC)
        await until(offered(servers, "late__echo"), "the late server after a retry")
    (warning,) = about(caplog, "late", logging.WARNING)
    assert f"cannot start '{program}': No such file or directory" in warning
    assert any("is back" in line for line in about(caplog, "late", logging.INFO))


async def test_a_stdio_server_gets_its_env_but_none_of_the_workers_secrets(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-worker-secret")
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:worker-token")
    monkeypatch.setenv("FILES_TOKEN", "files-token-42")
    env = {"TOKEN": "${FILES_TOKEN}", "MODE": "read-only"}
    leaky = {"command": "sh", "args": ["-c", 'echo "refused token $TOKEN" >&2; exit 1']}
    servers_config = {"box": toolbox(env=env), "leaky": {**leaky, "env": env}}
    async with running(servers_config) as servers:
        await until(offered(servers, "box__environment"), "the toolbox")
        await until(lambda: servers.status()["leaky"].state == "failed", "the leaky failure")
        outcome = await call(executor(servers), "box__environment")
        variables = json.loads(outcome.content.split("\n", 1)[1].rsplit("\n", 1)[0])["variables"]
    assert variables["TOKEN"] == "files-token-42" and variables["MODE"] == "read-only"
    assert variables["PATH"] == os.environ["PATH"]
    leaked = [k for k, v in variables.items() if "worker" in v or k.endswith(("_KEY", "_TOKEN"))]
    assert leaked == []
    shown = "\n".join(r.getMessage() for r in caplog.records) + str(servers.status())
    assert "refused token ***" in shown and "files-token-42" not in shown


async def test_disabled_and_denied_servers_offer_nothing_and_start_nothing(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "started"
    starts = {"command": "sh", "args": ["-c", f"touch {marker}; exec {sys.executable} {TOOLBOX}"]}
    async with running(
        {"off": {**starts, "disabled": True}, "no": {**starts, "trust": "deny"}, "box": toolbox()}
    ) as servers:
        await until(offered(servers, "box__echo"), "the toolbox")
        states = {name: status.state for name, status in servers.status().items()}
        assert states == {"off": "disabled", "no": "denied", "box": "connected"}
        assert all(name.startswith("box__") for name in servers.tools())
        outcome = await call(executor(servers), "no__echo", text="hi")
        assert outcome.is_error and "Unknown tool 'no__echo'" in outcome.content
    assert not marker.exists()


async def test_stopping_the_servers_ends_their_processes() -> None:
    async with running({"box": toolbox()}) as servers:
        await until(offered(servers, "box__environment"), "the toolbox")
        outcome = await call(executor(servers), "box__environment")
        pid = json.loads(outcome.content.split("\n", 1)[1].rsplit("\n", 1)[0])["pid"]
        os.kill(pid, 0)  # alive
        started = time.monotonic()
    stopped = time.monotonic() - started
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert stopped < 10, f"stopping took {stopped:.1f} s"
