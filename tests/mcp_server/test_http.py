"""`parley mcp --http`: streamable HTTP behind PARLEY_API_TOKEN, against a real process."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from tests.mcp_server.support import (
    DEADLINE,
    INITIALIZE,
    TOKEN,
    headers,
    mcp_env,
    served_url,
    sse_result,
    start,
    stop,
)
from tests.support.parley import ParleyProcess

pytestmark = pytest.mark.e2e
IDE = Implementation(name="Test IDE/2", version="1")  # a session label of mcp:http:Test-IDE-2


@contextlib.asynccontextmanager
async def http_server(tmp_path: Path, *args: str, **env: str) -> AsyncIterator[str]:
    """`parley mcp --http --port 0` with the token set; yields its URL, then stops it by
    SIGTERM and checks it exits 0."""
    proc = await start(tmp_path, "--http", "--port", "0", *args, PARLEY_API_TOKEN=TOKEN, **env)
    try:
        url = await served_url(proc)
        yield url
    finally:
        took = await stop(proc)
    assert proc.returncode == 0
    assert took < 15, f"{took:.1f} s to stop"


@pytest.fixture(scope="module")
def serving(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One `parley mcp --http --port 0` for the tests that only send it requests, each in a
    session of its own; its URL. Stopped by SIGTERM when the module's tests are done, and
    checked to exit 0 then (`http_server` checks the same for a server of a test's own)."""
    cwd = tmp_path_factory.mktemp("mcp-http")
    command = [sys.executable, "-m", "worker", "mcp", "--http", "--port", "0"]
    proc = subprocess.Popen(
        command,
        env=mcp_env(PARLEY_API_TOKEN=TOKEN),
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    stderr = proc.stderr
    assert stderr is not None

    def read() -> None:  # to the end, so a server that logs never waits on a full pipe
        for line in stderr:
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        while "serving MCP at " not in (line := lines.get(timeout=DEADLINE)):
            assert proc.poll() is None, "parley mcp --http exited before it served"
        yield line.split("serving MCP at ", 1)[1].strip()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(DEADLINE)
        finally:
            if proc.returncode is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert proc.returncode == 0


def call(name: str, arguments: dict[str, Any], id_: int = 2) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


async def open_session(client: httpx.AsyncClient, url: str) -> str:
    """A session opened with the right token; its id."""
    answer = await client.post(url, json=INITIALIZE, headers=headers(TOKEN))
    assert answer.status_code == 200, answer.text
    session = answer.headers["mcp-session-id"]
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await client.post(url, json=done, headers=headers(TOKEN, session))
    return session


async def test_the_sdk_client_with_the_token_lists_and_calls_tools(tmp_path: Path) -> None:
    async with (
        http_server(tmp_path) as url,
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, client_info=IDE) as session,
    ):
        await asyncio.wait_for(session.initialize(), DEADLINE)
        names = {t.name for t in (await session.list_tools()).tools}
        result = await session.call_tool("calculator", {"expression": "2^64"})
        unknown = await session.call_tool("nope", {})
        context = await session.call_tool("call_context", {})
    assert {"calculator", "current_time"} <= names
    assert not {"schedule_task", "launch"} & names
    assert not result.is_error
    assert result.content[0].text == str(2**64)  # type: ignore[union-attr]
    assert unknown.is_error
    assert unknown.content[0].text.startswith("Unknown tool 'nope'")  # type: ignore[union-attr]
    assert context.content[0].text == "mcp:http:Test-IDE-2 mcp mcp"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer wrong-token", f"Bearer {TOKEN}x", f"Basic {TOKEN}", "Bearer", TOKEN],
)
async def test_without_the_right_token_nothing_runs(
    serving: str, tmp_path: Path, authorization: str | None
) -> None:
    """A tool call in a live session, sent without the token, with a wrong one or in
    another scheme, is refused with 401 and writes nothing; with the token it writes."""
    target = tmp_path / "written.txt"
    write = call("slow_write", {"path": str(target), "seconds": 0})
    sent = {} if authorization is None else {"Authorization": authorization}
    url = serving
    async with httpx.AsyncClient(timeout=DEADLINE) as client:
        session = await open_session(client, url)
        refused = await client.post(url, json=write, headers=headers(None, session) | sent)
        fresh = await client.post(url, json=INITIALIZE, headers=headers(None) | sent)
        assert not target.exists()
        allowed = await client.post(url, json=write, headers=headers(TOKEN, session))
    for answer in (refused, fresh):
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"].startswith("Bearer")
        assert TOKEN not in answer.text
    assert "mcp-session-id" not in fresh.headers
    assert sse_result(allowed)["result"]["content"][0]["text"] == "written"
    assert target.read_text() == "written\n"


async def test_a_body_past_the_limit_is_refused(serving: str) -> None:
    big = call("calculator", {"expression": "1+" * 600_000 + "1"})
    async with httpx.AsyncClient(timeout=DEADLINE) as client:
        session = await open_session(client, serving)
        answer = await client.post(
            serving, content=json.dumps(big), headers=headers(TOKEN, session)
        )
    assert answer.status_code == 413


async def _one_line_exit(proc: ParleyProcess) -> str:
    _, err = await asyncio.wait_for(proc.communicate(), DEADLINE)
    stderr = err.decode()
    assert proc.returncode == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


async def test_without_a_configured_token_http_refuses_to_start(tmp_path: Path) -> None:
    line = await _one_line_exit(await start(tmp_path, "--http"))
    assert line.startswith("parley: configuration error: PARLEY_API_TOKEN:")


async def test_a_port_in_use_is_one_line(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = str(taken.getsockname()[1])
        proc = await start(tmp_path, "--http", "--port", port, PARLEY_API_TOKEN=TOKEN)
        line = await _one_line_exit(proc)
    assert line.startswith("parley: configuration error: PARLEY_HTTP_HOST/--port:")
    assert f"127.0.0.1:{port}" in line


async def test_a_port_without_http_is_one_line(tmp_path: Path) -> None:
    line = await _one_line_exit(await start(tmp_path, "--port", "9000"))
    assert line == "parley: --port is for --http; stdio needs no port"
