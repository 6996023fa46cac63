"""The MCP servers of one worker, whose tools an agent's registry offers as a `ToolSource`.

The registry asks for the tools on every model call, so they are kept in one dict, rebuilt
whenever a server's tools come or go; each server runs in a task of its own, started in
the background so that a slow server never delays the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping

from bot.config import Settings
from bot.mcp.config import McpConfig
from bot.mcp.server import McpServer
from bot.mcp.status import ServerStatus
from bot.mcp.transport import hide_queries
from bot.tools.base import Tool

STOP_WITHIN = 15.0


class McpServers:
    def __init__(self, config: McpConfig, settings: Settings, **tuning: float) -> None:
        self.servers = {
            name: McpServer(
                name,
                server,
                timeout=server.timeout or settings.tool_timeout,
                on_change=self._changed,
                **tuning,
            )
            for name, server in config.servers.items()
        }
        self._tools: dict[str, Tool] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self.changed = asyncio.Event()  # something to tell operators about

    def tools(self) -> Mapping[str, Tool]:
        return self._tools

    def start(self) -> None:
        """Connect every enabled server in the background."""
        hide_queries()
        for server in self.servers.values():
            if server.active:
                self._tasks.append(asyncio.create_task(server.run(), name=f"mcp:{server.name}"))

    async def aclose(self) -> None:
        """Disconnect all; stdio servers are stopped (stdin closed, then signalled)."""
        for server in self.servers.values():
            server.stop()
        if self._tasks:
            _, stuck = await asyncio.wait(self._tasks, timeout=STOP_WITHIN)
            for task in stuck:  # a stdio server's shutdown takes 6 s at most
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()

    def status(self) -> dict[str, ServerStatus]:
        return {name: server.status for name, server in self.servers.items()}

    def _changed(self) -> None:
        self._tools = {
            name: tool for server in self.servers.values() for name, tool in server.tools.items()
        }
        self.changed.set()
