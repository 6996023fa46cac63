"""One MCP server kept connected for as long as the worker runs.

`McpServer.run` connects, initializes, lists the tools and holds the session, re-listing
them when the server says they changed. When the server cannot start or goes away, its
tools are withdrawn at once, one warning says why, and it is tried again with exponential
backoff (1 s doubling to 5 min, jittered so that workers do not knock in step). Nothing more
is logged until it is back (INFO) or the reason changes, so a server down for a day costs a
handful of lines, not thousands.

The death of a connection is seen where it happens: the transport's read stream ends (a
stdio server exited) or a request fails (an HTTP server went away); a ping every
`ping_every` seconds finds a server that hangs or left quietly. A call in flight ends at
once with "stopped during the call" (the SDK fails the pending request when its stream or
its HTTP response breaks), rather than at its timeout, and such a call has the connection
checked at once, so the tools go with it.

Backoff is counted here rather than with tenacity: an attempt is a session that may be held
for days, and the count starts over only after a session that held for a while (`STABLE`),
so a server that crashes right after each start still backs off.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types
from mcp import ClientSession, MCPError
from mcp.client._transport import ReadStream, WriteStream
from mcp.client.session import IncomingMessage
from mcp.shared.message import SessionMessage

from bot import __version__
from bot.mcp.config import ServerConfig
from bot.mcp.output import LastWords, was_cut
from bot.mcp.results import result_text
from bot.mcp.status import ServerStatus, State
from bot.mcp.tools import mcp_tools
from bot.mcp.transport import (
    CONNECT_TIMEOUT,
    Ended,
    failure_reason,
    open_transport,
    redact,
)
from bot.tools.base import Tool, ToolError

log = logging.getLogger(__name__)
CLIENT = mcp_types.Implementation(name="parley", version=__version__)
STABLE = 60.0  # a session held this long starts the backoff over
MAX_PAGES = 100  # of a tool listing, against a server that pages forever
Message = SessionMessage | Exception


@dataclass
class Link:
    """What one connection tells its holder: it ended, or its tools changed."""

    wake: asyncio.Event = field(default_factory=asyncio.Event)
    ended: bool = False
    stale: bool = False

    async def on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self.stale = True
            self.wake.set()

    def close(self) -> None:
        self.ended = True
        self.wake.set()


class Session(ClientSession):
    """The SDK's client session, except that a result cut as it arrived is not checked
    against the tool's output schema, which its cut structured content cannot match: the
    model reads the result's text either way."""

    async def validate_tool_result(self, name: str, result: mcp_types.CallToolResult) -> None:
        if not was_cut(result):
            await super().validate_tool_result(name, result)


class McpServer:
    """One configured server: its connection, its state and the tools it offers now."""

    def __init__(
        self,
        name: str,
        config: ServerConfig,
        *,
        timeout: float,
        output_limit: int,
        on_change: Callable[[], None] = lambda: None,
        backoff: float = 1.0,
        backoff_max: float = 300.0,
        ping_every: float = 30.0,
    ) -> None:
        self.name = name
        self.config = config
        self.timeout = timeout  # of each call
        self.output_limit = output_limit  # characters of a result the model sees
        self.backoff, self.backoff_max, self.ping_every = backoff, backoff_max, ping_every
        self._on_change = on_change
        self.tools: Mapping[str, Tool] = {}
        self._session: ClientSession | None = None
        self._link = Link()  # the current connection's
        self._skipped: set[str] = set()
        self._logged: str | None = None  # the reason last logged while down
        self._up_since: float | None = None  # when the current session was established
        self._scope = anyio.CancelScope()
        self.tried = asyncio.Event()  # its first connection was made, or failed
        initial: State = "disabled" if config.disabled else "connecting"
        self.status = ServerStatus(
            "denied" if config.trust == "deny" else initial, since=time.time()
        )

    @property
    def active(self) -> bool:
        """Whether it is to be connected at all."""
        return not self.config.disabled and self.config.trust != "deny"

    async def run(self) -> None:
        """Connect, hold, and after each failure wait and connect again; until `stop`."""
        try:
            with self._scope:
                await self._keep_connected()
        finally:
            self.tried.set()

    def stop(self) -> None:
        """End `run`, closing the connection (a stdio server is stopped). An anyio
        cancellation, not `Task.cancel`: the SDK's shielded shutdown of a stdio server may
        swallow a plain task cancellation, and the server would be started again."""
        self._scope.cancel()

    async def _keep_connected(self) -> None:
        failures = 0
        while True:
            self._up_since = None
            reason = await self._connect_once()
            self.tried.set()
            if self._up_since is not None and time.monotonic() - self._up_since >= STABLE:
                failures = 0
            self._failed(reason)
            delay = min(self.backoff_max, self.backoff * 2**failures) * random.uniform(1.0, 1.25)
            failures += 1
            await asyncio.sleep(delay)
            self._set(ServerStatus("connecting", error=reason, since=time.time()))

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """Call one of the server's tools; a failure is a ToolError the model can read."""
        session, link = self._session, self._link
        if session is None:
            why = f" ({self.status.error})" if self.status.error else ""
            raise ToolError(f"the MCP server {self.name} is not connected{why}; try again later")
        try:
            result = await session.call_tool(tool, arguments)
        except MCPError as exc:
            if exc.error.code == mcp_types.CONNECTION_CLOSED:
                link.wake.set()  # a check now: over HTTP only this call may know yet
                raise ToolError(f"the MCP server {self.name} stopped during the call") from None
            message = redact(exc.error.message, self.config)
            raise ToolError(f"the MCP server {self.name} refused the call: {message}") from None
        return result_text(self.name, result)

    async def _connect_once(self) -> str:
        """One connection, from start to end; why it ended."""
        words = LastWords()
        try:
            async with open_transport(self.config, words, self.output_limit) as (read, write):
                await self._serve(read, write)
        except Exception as exc:
            return failure_reason(exc, self.config, words.last_line())
        finally:
            self._withdraw()
        return "the connection ended"  # pragma: no cover (`_serve` only raises)

    async def _serve(self, read: ReadStream[Message], write: WriteStream[SessionMessage]) -> None:
        link = Link()
        relay_in, relay_out = anyio.create_memory_object_stream[Message](0)
        async with anyio.create_task_group() as group:
            group.start_soon(_relay, read, relay_in, link)
            try:
                async with Session(
                    relay_out, write, message_handler=link.on_message, client_info=CLIENT
                ) as session:
                    with anyio.fail_after(CONNECT_TIMEOUT):
                        await session.initialize()
                        listed = await _listing(session)
                    self._connected(session, link, listed)
                    await self._hold(session, link)
            finally:
                self._withdraw()
                group.cancel_scope.cancel()

    async def _hold(self, session: ClientSession, link: Link) -> None:
        """Keep the session until it ends: re-list on a change, ping while it is quiet."""
        while True:
            with anyio.move_on_after(self.ping_every):
                await link.wake.wait()
            link.wake.clear()
            if link.ended:
                self._withdraw()
                raise Ended("the connection closed")
            with anyio.fail_after(CONNECT_TIMEOUT):
                if link.stale:
                    link.stale = False
                    self._offer(await _listing(session))
                else:
                    await session.send_ping()

    def _connected(self, session: ClientSession, link: Link, listed: list[mcp_types.Tool]) -> None:
        self._session, self._link = session, link
        self._up_since = time.monotonic()
        self._offer(listed)
        self.tried.set()
        count = len(self.tools)
        if self._logged is not None:
            log.info("MCP server %s is back with %d tools", self.name, count)
        else:
            log.info("MCP server %s connected with %d tools", self.name, count)
        self._logged = None

    def _offer(self, listed: list[mcp_types.Tool]) -> None:
        self.tools = mcp_tools(
            self.name, self.config, listed, self.call, timeout=self.timeout, skipped=self._skipped
        )
        self._set(ServerStatus("connected", sorted(self.tools), since=time.time()))

    def _withdraw(self) -> None:
        """No more calls, no tools: at once, before the connection is wound down."""
        self._session = None
        self.tools = {}
        if self.status.state == "connected":
            self._set(ServerStatus("failed", error="disconnected", since=time.time()))

    def _failed(self, reason: str) -> None:
        if reason != self._logged:
            log.warning("MCP server %s is down: %s (trying again with backoff)", self.name, reason)
            self._logged = reason
        self._set(ServerStatus("failed", error=reason, since=time.time()))

    def _set(self, status: ServerStatus) -> None:
        if status.state == self.status.state and status.error == self.status.error:
            status = ServerStatus(status.state, status.tools, status.error, self.status.since)
        self.status = status
        self._on_change()


async def _relay(source: ReadStream[Message], sink: WriteStream[Message], link: Link) -> None:
    """Pass the transport's messages on to the session, and note when they end."""
    try:
        async with sink:
            async for item in source:
                await sink.send(item)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        link.close()


async def _listing(session: ClientSession) -> list[mcp_types.Tool]:
    """All the server's tools, page after page; none if it has no tools."""
    capabilities = session.server_capabilities
    if capabilities is not None and capabilities.tools is None:
        return []
    listed: list[mcp_types.Tool] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        params = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        listed += page.tools
        cursor = page.next_cursor
        if not cursor:
            break
    return listed
