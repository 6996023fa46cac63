"""`parley mcp`: Parley's tools served to other MCP clients, over stdio or streamable HTTP.

Over stdio the client started us, so it needs no token; stdout is the protocol's alone
(logs go to stderr, and the SDK points fd 1 at stderr while it serves, so even a stray
print cannot break a message). The server stops when stdin closes, once it has answered every
request it read, or at once on SIGTERM/SIGINT, and takes its helper processes down with it.

The tools and how a call runs are `bot.assembly.offered`'s; this module only wires them to
the SDK's low-level server, whose handlers take a ready JSON schema and one generic call.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from bot import __version__
from bot.assembly.agent import configured_tools, tool_executor, tool_registry
from bot.assembly.offered import OfferedTools, offered_tools
from bot.config.settings import Settings
from bot.tools.executor import ToolExecutor
from worker.mcp_stdin import Unanswered, pipe_stdin
from worker.signals import stop_on_signals

log = logging.getLogger(__name__)
STDIO_SESSION = "mcp:stdio"
CLIENT_NAME = re.compile(r"[^A-Za-z0-9_.-]+")
INSTRUCTIONS = "Parley's tools: exact arithmetic, the time in any zone, and its operator's own."


def build_executor(settings: Settings, *, sensitive: bool) -> ToolExecutor:
    """The executor over the tools offered here, set up as the worker sets up its own."""
    offered = offered_tools(configured_tools(settings), sensitive=sensitive)
    return tool_executor(settings, tool_registry(offered))


def http_session(ctx: ServerRequestContext[Any]) -> str:
    """`mcp:http:<client>`: the name the client gave when it connected, else `default`.
    Only a label for what tools keep per session; the token is what lets a client in."""
    params = ctx.session.client_params
    name = CLIENT_NAME.sub("-", params.client_info.name)[:64] if params else ""
    return f"mcp:http:{name.strip('-') or 'default'}"


def build_server(offered: OfferedTools, *, over_http: bool) -> Server:
    """The SDK's low-level server: Parley's tools carry their own schemas, and one handler
    serves every call."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return offered.listing()

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        session = http_session(ctx) if over_http else STDIO_SESSION
        return await offered.call(session, params.name, params.arguments)

    return Server(
        "parley",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(server: Server, executor: ToolExecutor) -> None:
    """Serve one client over stdin and stdout until stdin closes or a signal comes."""
    stopping = stop_on_signals()
    async with pipe_stdin() as stdin:
        serving = asyncio.create_task(_run_stdio(server, executor, stdin))
        stop = asyncio.create_task(stopping.wait())
        try:
            await asyncio.wait({serving, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            serving.cancel()
            stop.cancel()
            await asyncio.gather(serving, stop, return_exceptions=True)
        if not serving.cancelled() and (failure := serving.exception()) is not None:
            raise failure


async def _run_stdio(server: Server, executor: ToolExecutor, stdin: Any) -> None:
    async with stdio_server(stdin=stdin) as (read, write):
        # Only now: a helper process started earlier would inherit the real stdout.
        warming = asyncio.create_task(executor.warm())
        requests = Unanswered()
        try:
            await server.run(
                requests.reading(read),
                requests.writing(write),
                server.create_initialization_options(),
            )
        finally:
            warming.cancel()


async def serve(settings: Settings, *, http: bool, port: int, sensitive: bool) -> None:
    """`parley mcp`; raises ConfigError (one line naming the variable) before serving."""
    from worker.mcp_http import api_token, serve_http  # noqa: PLC0415 (uvicorn: HTTP only)

    token = api_token(settings) if http else None
    executor = build_executor(settings, sensitive=sensitive)
    server = build_server(OfferedTools(executor, settings), over_http=http)
    try:
        if token is None:
            await serve_stdio(server, executor)
            return
        warming = asyncio.create_task(executor.warm())
        try:
            await serve_http(server, settings, token, port)
        finally:
            warming.cancel()
    finally:
        await executor.aclose()
