"""The MCP servers of one worker, whose tools an agent's registry offers as a `ToolSource`.

The registry asks for the tools on every model call, so they are kept in one dict, rebuilt
whenever a server's tools come or go; each server runs in a task of its own, started in
the background so that a slow server never delays the worker.

A turn in a worker's first seconds would be offered none of a server's tools only because the
server is still starting (a Python or node server takes a second or two). So turns wait for
the servers' first connections (`first_connections`), `FIRST_WAIT` seconds at most in all, for
the worker's whole life: once each server's first connection was made or failed, or the wait
has run out once, no turn waits again, and a server reconnecting later never delays one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping

from bot.config.settings import Settings
from bot.mcp.config import McpConfig
from bot.mcp.server import McpServer
from bot.mcp.status import ServerStatus
from bot.mcp.transport import hide_queries
from bot.tools.base import Tool

log = logging.getLogger(__name__)
STOP_WITHIN = 15.0
FIRST_WAIT = 5.0  # seconds turns may wait, in all, for the servers' first connections


class McpServers:
    def __init__(self, config: McpConfig, settings: Settings, **tuning: float) -> None:
        self.servers = {
            name: McpServer(
                name,
                server,
                timeout=server.timeout or settings.tool_timeout,
                output_limit=settings.tool_output_limit,
                on_change=self._changed,
                **tuning,
            )
            for name, server in config.servers.items()
        }
        self._tools: dict[str, Tool] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._wait_until: float | None = None  # of the wait for the first connections
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

    async def first_connections(self) -> None:
        """Until every server has made or failed its first connection, within the one
        `FIRST_WAIT` the worker has; see the module's docstring."""
        starting = [s for s in self.servers.values() if s.active and not s.tried.is_set()]
        if not starting or not self._tasks:
            return
        loop = asyncio.get_running_loop()
        if self._wait_until is None:
            self._wait_until = loop.time() + FIRST_WAIT
            names = ", ".join(server.name for server in starting)
            log.info("turns wait up to %g s for MCP servers connecting: %s", FIRST_WAIT, names)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout_at(self._wait_until):
                await asyncio.gather(*(server.tried.wait() for server in starting))

    def status(self) -> dict[str, ServerStatus]:
        return {name: server.status for name, server in self.servers.items()}

    def _changed(self) -> None:
        self._tools = {
            name: tool for server in self.servers.values() for name, tool in server.tools.items()
        }
        self.changed.set()
