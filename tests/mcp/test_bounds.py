"""What a stdio MCP server can push at a worker, and the bounds the worker keeps: a flood on
stderr, lines on stdout that are not JSON-RPC, a result of tens of megabytes, and processes
left behind. Real server processes (tests/mcp/servers/unruly.py), the default settings."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.mcp.output import STDERR_BURST, STDERR_RATE
from tests.mcp.support import SETTINGS, call, executor, offered, running, toolbox
from tests.support.waiting import until

pytestmark = pytest.mark.e2e
UNRULY = Path(__file__).parent / "servers" / "unruly.py"


def unruly(*args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(UNRULY), *args]}


def unlinked_bytes() -> int:
    """Bytes of the files this process holds open that have no name any more (invisible to
    `du`): where a scratch file of a server's stderr would grow."""
    total = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").endswith(" (deleted)"):
                total += os.stat(f"/proc/self/fd/{fd}").st_size
        except OSError:
            continue  # closed meanwhile
    return total


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@contextlib.asynccontextmanager
async def sampled(measure: Callable[[], int]) -> AsyncIterator[list[int]]:
    """Values of `measure` before, every 5 ms during, and after the block."""
    values = [measure()]

    async def sample() -> None:
        while True:
            await asyncio.sleep(0.005)
            values.append(measure())

    task = asyncio.create_task(sample())
    try:
        yield values
    finally:
        task.cancel()
        values.append(measure())


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for a parent that never reaps it does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


async def test_a_stderr_flood_is_kept_to_its_last_words_in_memory_and_paced() -> None:
    async with running({"noisy": unruly("serve")}) as servers:
        await until(offered(servers, "noisy__flood"), "the noisy server")
        runner = executor(servers)
        on_disk = unlinked_bytes()
        megabytes = 8
        outcome = await call(runner, "noisy__flood", megabytes=megabytes, last_words="noisy: end")
        assert not outcome.is_error, outcome.content
        took = float(outcome.content.split("\n")[1])
        grown = unlinked_bytes() - on_disk
        crashed = await call(runner, "noisy__crash")
        assert crashed.is_error
        await until(lambda: "last words" in (servers.status()["noisy"].error or ""), "a reason")
        reason = servers.status()["noisy"].error or ""
    print(f"\n{megabytes} MB on stderr took the server {took:.1f} s; unlinked files grew {grown}")
    assert grown < 64 * 1024, f"{grown} bytes of unlinked files for a server's stderr"
    # Past the burst the server waits on its pipe: the rest goes at STDERR_RATE at most.
    slack = 1024 * 1024  # the pipe's and the reader's buffers
    assert took >= (megabytes * 1024 * 1024 - STDERR_BURST - slack) / STDERR_RATE
    assert reason.endswith("its last words: noisy: end"), reason


async def test_lines_that_are_not_json_rpc_fail_the_server_with_one_line_and_a_banner_does_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    began = time.monotonic()
    async with running({"garbage": unruly("garbage"), "banner": unruly("serve", "2")}) as servers:
        await until(lambda: servers.status()["garbage"].state == "failed", "the failure")
        failed_after = time.monotonic() - began
        await until(offered(servers, "banner__huge"), "the server with a banner")
        # The next attempt (after the default backoff) fails the same way, and says nothing.
        await until(lambda: servers.status()["garbage"].state == "connecting", "a retry")
        await until(lambda: servers.status()["garbage"].state == "failed", "the retry's failure")
        reason = servers.status()["garbage"].error or ""
    print(f"\nthe garbage server was failed {failed_after:.2f} s after the start")
    expected = "it wrote 5 lines that are not JSON-RPC to stdout, the first: 'Server listening"
    assert reason.startswith(expected), reason
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [f"MCP server garbage is down: {reason} (trying again with backoff)"]
    assert not [r for r in caplog.records if r.exc_info]  # no traceback, for no line
    logged = sum(len(r.getMessage()) for r in caplog.records)
    assert logged < 10_000, f"{logged} characters logged"


async def test_a_huge_result_is_cut_at_the_output_limit_as_it_arrives() -> None:
    async with running({"big": unruly("serve")}) as servers:
        await until(offered(servers, "big__huge"), "the server")
        runner = executor(servers)
        before = resident_bytes()
        async with sampled(resident_bytes) as peaks:
            outcome = await call(runner, "big__huge", megabytes=30)
        grown = max(peaks) - before
        after = await call(runner, "big__huge", megabytes=0)
    print(f"\na 30 MB result grew the worker by {grown / 2**20:.1f} MB at most")
    assert not outcome.is_error, outcome.content[:500]
    assert "the start of a huge result ...." in outcome.content
    found = re.search(
        r"\[the server's answer was cut as it arrived: ([\d,]+) bytes", outcome.content
    )
    assert found is not None and int(found[1].replace(",", "")) > 30 * 2**20, outcome.content[-300:]
    assert "output truncated" not in outcome.content  # no second note with other figures
    text = outcome.content.split("\n", 1)[1].rsplit("\n", 1)[0]  # inside the data marks
    assert len(text) <= SETTINGS.tool_output_limit
    assert grown < 30 * 2**20, f"the worker grew by {grown / 2**20:.1f} MB"
    assert not after.is_error and "the start of a huge result" in after.content


async def test_stopping_servers_ends_the_processes_they_started(tmp_path: Path) -> None:
    """One server exits as soon as its stdin closes, leaving its child; the other ignores
    SIGTERM and never answers, behind a shell."""
    left, hung = tmp_path / "left", tmp_path / "hung"
    shell = {"command": "sh", "args": ["-c", f"{sys.executable} {UNRULY} hang {hung}; true"]}
    async with running({"parent": unruly("parent", str(left)), "hung": shell}) as servers:
        await until(offered(servers, "parent__huge"), "the server with a child")
        await until(hung.exists, "the hung server's processes")
    started = [int(pid) for pid in (left.read_text() + " " + hung.read_text()).split()]
    await until(lambda: not any(alive(pid) for pid in started), "the processes gone")


async def test_turns_wait_for_the_first_connections_only_and_for_a_while_at_most(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "gate"
    async with running({"box": toolbox(), "gated": unruly("gated", str(gate))}) as servers:
        await until(offered(servers, "box__echo"), "the toolbox")
        began = time.monotonic()
        await servers.first_connections()
        waited = time.monotonic() - began
        assert servers.status()["gated"].state == "connecting"  # given up on, for now
        again = time.monotonic()
        await servers.first_connections()
        assert time.monotonic() - again < 1
        crashed = await call(executor(servers), "box__crash")
        assert crashed.is_error and not servers.servers["box"].tools
        reconnecting = time.monotonic()
        await servers.first_connections()
        assert time.monotonic() - reconnecting < 1
    print(f"\nthe first wait took {waited:.2f} s")
    assert waited >= 4.9  # FIRST_WAIT, since the gated server never came
