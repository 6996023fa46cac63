"""Tools that tests load into worker processes through PARLEY_TOOL_MODULES."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

from bot.tools import Tool, ToolContext, tool


@tool(timeout=120)
async def slow_write(ctx: ToolContext, path: str, seconds: float) -> str:
    """Append a line to a file, slowly (a side effect that must not be repeated blindly)."""
    await asyncio.sleep(seconds)
    await asyncio.to_thread(_append, Path(path), "written\n")
    return "written"


def _append(path: Path, line: str) -> None:
    with path.open("a") as handle:
        handle.write(line)


@tool(sensitive=True)
async def launch(ctx: ToolContext, target: str) -> str:
    """Launch something; needs a person's approval."""
    return f"launched {target}"


@tool(read_only=True)
async def crash_worker(ctx: ToolContext) -> str:
    """Kills the process running it. Read-only tools are re-run after a crash, so a message
    that calls it crashes every worker that picks it up: a poison message."""
    os._exit(17)


@tool
def block_thread(ctx: ToolContext) -> str:
    """A plain function that never returns: it blocks its thread for good."""
    threading.Event().wait()
    return "unreachable"


@tool
async def block_in_async(ctx: ToolContext) -> str:
    """An async tool whose body blocks for good (a sync call inside), never awaiting."""
    threading.Event().wait()
    return "unreachable"


@tool
async def fail_loudly(ctx: ToolContext, detail: str) -> str:
    """Fails as a bug would, with `detail` in its error (which the worker logs)."""
    raise RuntimeError(f"something broke: {detail}")


@tool(read_only=True)
async def show_key(ctx: ToolContext) -> str:
    """A careless tool: its result holds its own key (`PARLEY_TOOL_SHOW_KEY_API_KEY`), which
    must still never reach a trace or a log."""
    return f"called the service with key {ctx.config.get('api_key', 'none')}"


TOOLS: list[Tool] = [
    slow_write, launch, crash_worker, block_thread, block_in_async, fail_loudly, show_key
]  # fmt: skip
