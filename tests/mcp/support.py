"""What the MCP tests share: configurations, running servers, and calls through the real
`ToolExecutor`, as an agent makes them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from bot.config.settings import Settings
from bot.mcp.config import McpConfig, parse_mcp_config
from bot.mcp.source import McpServers
from bot.tools.base import ToolContext, ToolRegistry
from bot.tools.executor import ToolExecutor, ToolOutcome
from bot.vocabulary.envelope import Sender
from bot.vocabulary.messages import ToolUseBlock
from tests.support.redis_server import free_port
from tests.support.waiting import until

TOOLBOX = Path(__file__).parent / "servers" / "toolbox.py"
SETTINGS = Settings(_env_file=None)


def toolbox(**keys: Any) -> dict[str, Any]:
    """The stdio toolbox server's entry, with Parley's `keys` added."""
    return {"command": sys.executable, "args": [str(TOOLBOX)], **keys}


def time_server(**keys: Any) -> dict[str, Any]:
    """The reference MCP time server (PyPI's mcp-server-time), over stdio."""
    return {"command": sys.executable, "args": ["-m", "mcp_server_time"], **keys}


def config(servers: dict[str, Any]) -> McpConfig:
    return parse_mcp_config(json.dumps({"mcpServers": servers}), "mcp.json", os.environ)


@contextlib.asynccontextmanager
async def running(servers: dict[str, Any], **tuning: float) -> AsyncIterator[McpServers]:
    """These servers connecting in the background while the test runs."""
    started = McpServers(config(servers), SETTINGS, **tuning)
    started.start()
    try:
        yield started
    finally:
        await started.aclose()


def offered(servers: McpServers, *names: str) -> Callable[[], bool]:
    return lambda: all(name in servers.tools() for name in names)


def executor(servers: McpServers) -> ToolExecutor:
    """The executor an agent has, with the default limits, offering `servers`' tools."""
    registry = ToolRegistry()
    registry.add_source(servers)
    return ToolExecutor(
        registry,
        timeout=SETTINGS.tool_timeout,
        concurrency=SETTINGS.tool_concurrency,
        output_limit=SETTINGS.tool_output_limit,
    )


async def call(runner: ToolExecutor, name: str, **arguments: Any) -> ToolOutcome:
    ctx = ToolContext(session_key="test", user=Sender(id="tg:1"))
    return await runner.run_one(ToolUseBlock(id="call-1", name=name, input=arguments), ctx, {})


@contextlib.asynccontextmanager
async def http_toolbox(
    kind: str = "http",
) -> AsyncIterator[tuple[str, asyncio.subprocess.Process]]:
    """The toolbox served over streamable HTTP (`http`) or SSE (`sse`) by a process of its
    own on 127.0.0.1; its URL once it accepts connections, and the process."""
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(TOOLBOX),
        kind,
        str(port),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        await until(
            lambda: _accepts(port) or process.returncode is not None, f"the toolbox on {port}"
        )
        assert process.returncode is None, f"the toolbox exited with {process.returncode}"
        yield f"http://127.0.0.1:{port}/{'mcp' if kind == 'http' else 'sse'}", process
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


def _accepts(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0
