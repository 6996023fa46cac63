"""The MCP servers of `mcp.json` (PARLEY_MCP_CONFIG), each connected once as a worker
connects it: started (a stdio server) or reached (an HTTP one), initialised, its tools
listed, then stopped.

The connection is the worker's own (`bot.mcp.server.McpServer`), so a failure reads as the
worker would log it: the server's last words on stderr, an HTTP status, with the configured
secrets (its `env` and `headers`) taken out. A server switched off (`disabled`, or `trust`
`deny`) is listed as skipped.
"""

from __future__ import annotations

import asyncio
import contextlib

from bot.config.settings import ConfigError, Settings
from bot.mcp.config import McpConfig, ServerConfig, load_mcp_config
from worker.doctor.checks import Check, Run
from worker.doctor.report import Finding, failed, ok, skipped, warning

STOP_WITHIN = 10.0  # a stdio server's shutdown takes 6 s at most
SHOWN_TOOLS = 5
STUCK = "run the server by hand to see where it hangs, or allow it more time (--timeout)"


def mcp_config(settings: Settings) -> McpConfig | None:
    """The servers, or None where there is no file; a ConfigError for a mistake in it."""
    return load_mcp_config(settings)


def mcp_checks(config: McpConfig, settings: Settings) -> list[Check]:
    """One check for each server of the file."""
    return [
        Check(f"mcp {name}", _checking(name, server, settings), STUCK, load=_load)
        for name, server in config.servers.items()
    ]


def _load() -> None:
    """The MCP SDK, imported only where servers are configured."""
    import bot.mcp.server  # noqa: F401, PLC0415


def config_failure(exc: ConfigError) -> Finding:
    return failed("mcp", str(exc), "fix the file (PARLEY_MCP_CONFIG, else ./mcp.json)")


def no_config() -> Finding:
    return skipped("mcp", "no MCP servers (no PARLEY_MCP_CONFIG, no ./mcp.json)")


def _checking(name: str, config: ServerConfig, settings: Settings) -> Run:
    async def run() -> list[Finding]:
        return [await check_server(name, config, settings)]

    return run


async def check_server(name: str, config: ServerConfig, settings: Settings) -> Finding:
    check = f"mcp {name}"
    if config.disabled:
        return skipped(check, "disabled in the file")
    if config.trust == "deny":
        return skipped(check, 'trust "deny": none of its tools is offered')
    from bot.mcp.server import McpServer  # noqa: PLC0415 (imported by `_load`)

    server = McpServer(
        name,
        config,
        timeout=config.timeout or settings.tool_timeout,
        output_limit=settings.tool_output_limit,
        backoff=3600.0,  # one attempt: the doctor stops it once it was tried
    )
    task = asyncio.create_task(server.run(), name=f"doctor:{check}")
    try:
        await server.tried.wait()
        status = server.status  # before stopping it, which makes it "disconnected"
    finally:
        server.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait({task}, timeout=STOP_WITHIN)
    if status.state == "connected" and not status.tools:
        return warning(
            check,
            "connected, but it offers Parley no tool",
            f'check "tools" (allow, deny) of {name!r} in mcp.json, and that the server has any',
        )
    if status.state == "connected":
        tools = ", ".join(status.tools[:SHOWN_TOOLS])
        more = len(status.tools) - SHOWN_TOOLS
        tools += f" and {more} more" if more > 0 else ""
        return ok(check, f"connected, {len(status.tools)} tools offered: {tools}")
    how = "run its command by hand to see why" if config.command else "check its url and headers"
    return failed(check, status.error or "it did not connect", f"{how} (mcp.json, {name!r})")
