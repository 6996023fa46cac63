"""What the agent can use, as people (`/help`, `/tools`) and operators (`/api/tools`) see it:
Parley's own tools, and the MCP servers the workers connect to, with how each is doing.

`parley web` has no MCP connection of its own: the workers keep them and write their state
to Redis (`bot.mcp.status`), and this reads the merged view. A server's tools are offered
to the model only while it is connected, so that is what people are told.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from redis.asyncio import Redis

from bot.llm.base import ToolSpec
from bot.mcp.status import ServerStatus, mcp_status

STATE_WORDS = {
    "connected": "connected",
    "connecting": "connecting…",
    "failed": "not reachable now",
    "disabled": "turned off",
    "denied": "not allowed",
}


@dataclass(frozen=True)
class ToolCatalog:
    redis: Redis
    own: list[ToolSpec]  # Parley's own tools, as these settings offer them

    async def servers(self) -> dict[str, ServerStatus]:
        return await mcp_status(self.redis)

    async def as_json(self) -> dict[str, Any]:
        """`/api/tools`: the tools with their schemas, and every server's state."""
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in self.own
        ]
        servers = {name: asdict(status) for name, status in (await self.servers()).items()}
        return {"tools": tools, "mcp_servers": servers}

    async def as_text(self) -> str:
        """Plain lines for a chat: the tools by name, then each server and its state."""
        return "Tools: " + ", ".join(t.name for t in self.own) + "." + await self.servers_text()

    async def servers_text(self) -> str:
        """Each server and its state on a line of its own, after a line break; "" for none."""
        lines = [""]
        servers = await self.servers()
        if servers:
            lines.append("Tool servers (MCP):")
        for name, status in servers.items():
            words = STATE_WORDS.get(status.state, status.state)
            if status.state == "connected":
                count = len(status.tools)
                words += f", {count} tool{'s' if count != 1 else ''}"
            lines.append(f"• {name}: {words}")
        return "\n".join(lines)
