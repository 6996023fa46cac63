"""A tool `parley mcp` tests load through PARLEY_TOOL_MODULES: it shows what a call sees."""

from __future__ import annotations

from bot.tools import Tool, ToolContext, tool


@tool(read_only=True)
async def call_context(ctx: ToolContext) -> str:
    """The session, user and platform this call runs for."""
    return f"{ctx.session_key} {ctx.user.id} {ctx.platform}"


TOOLS: list[Tool] = [call_context]
