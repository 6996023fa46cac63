"""Starting a real `parley mcp` process, and talking to it with the SDK's own client."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.support.parley import PIPE, ParleyProcess, start_parley

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "mcp-test-token-0123456789"
DEADLINE = 60.0  # seconds: generous, for a busy machine
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw test", "version": "1"},
    },
}


def mcp_env(**extra: str) -> dict[str, str]:
    """What `parley mcp` is started with: the test tools (one sensitive, one that blocks),
    and nothing from the developer's own environment or .env."""
    return {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(ROOT),
        "PARLEY_TOOL_MODULES": '["tests.support.tools", "tests.mcp_server.tools"]',
        "PARLEY_LOG_LEVEL": "WARNING",
        **extra,
    }


@contextlib.asynccontextmanager
async def stdio_session(
    cwd: Path, *args: str, **env: str
) -> AsyncIterator[tuple[ClientSession, Any]]:
    """An initialized SDK client session with `python -m worker mcp ARGS` over stdio."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "worker", "mcp", *args], env=mcp_env(**env), cwd=cwd
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        started = await asyncio.wait_for(session.initialize(), DEADLINE)
        yield session, started


async def start(cwd: Path, *args: str, **env: str) -> ParleyProcess:
    """`python -m worker mcp ARGS` with every stream a pipe, in a process group of its own."""
    return await start_parley(
        "mcp", *args, env=mcp_env(**env), cwd=cwd, stdin=PIPE, stdout=PIPE, stderr=PIPE,
        start_new_session=True,
    )  # fmt: skip


async def stop(proc: ParleyProcess, sig: int = signal.SIGTERM) -> float:
    """Send `sig` and wait for the exit; returns how long it took (killed if it hangs)."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    proc.send_signal(sig)
    try:
        await asyncio.wait_for(proc.wait(), DEADLINE)
    finally:
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
    return loop.time() - began


async def served_url(proc: ParleyProcess) -> str:
    """The URL `parley mcp --http` says it serves, from its stderr."""
    assert proc.stderr is not None
    while True:
        line = (await asyncio.wait_for(proc.stderr.readline(), DEADLINE)).decode()
        assert line, "parley mcp --http exited before it served"
        if "serving MCP at " in line:
            return line.split("serving MCP at ", 1)[1].strip()


def sse_result(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a streamable HTTP answer (JSON, or one SSE event)."""
    if response.headers.get("content-type", "").startswith("application/json"):
        message: dict[str, Any] = response.json()
        return message
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if "id" in message:
                return message
    raise AssertionError(f"no JSON-RPC answer in {response.text!r}")


def headers(token: str | None, session: str | None = None) -> dict[str, str]:
    found = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token is not None:
        found["Authorization"] = f"Bearer {token}"
    if session is not None:
        found["Mcp-Session-Id"] = session
        found["Mcp-Protocol-Version"] = "2025-11-25"
    return found
