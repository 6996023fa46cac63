"""Parley's tools as an MCP server offers them to other clients (Claude Desktop, IDEs, agents).

Which tools: the agent's own as a process without the database's stores has them (the
scheduled-task, memory and preference tools are built on a worker's stores, so they are not
built here at all), less those that send the person a file in the conversation (a client has
none), and less the sensitive ones unless the operator opts in: an MCP client asks
its own user before a call, but whether a code sandbox or file writes leave this machine at
all is the operator's choice.

A call runs through the same `ToolExecutor` as the agent's calls, so validation, timeouts,
isolation and output limits hold the same; whatever goes wrong comes back as a result with
`isError` and the executor's text, which a client's model can read and act on.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from bot.assembly.catalog import CHAT_TOOLS
from bot.config.settings import Settings
from bot.tools.base import Tool, ToolContext
from bot.tools.executor import ToolExecutor
from bot.tools.workspace_paths import workspace_of
from bot.vocabulary.envelope import Sender
from bot.vocabulary.messages import ToolUseBlock

MCP_USER = Sender(id="mcp", name="MCP client")


def offered_tools(tools: Iterable[Tool], *, sensitive: bool) -> list[Tool]:
    """The tools an MCP client may call: sensitive ones on request."""
    return [t for t in tools if (sensitive or not t.sensitive) and t.name not in CHAT_TOOLS]


def describe(item: Tool) -> types.Tool:
    """The tool as an MCP client lists it. The hints follow what Parley knows: a read-only
    tool changes nothing (and may be repeated); a sensitive one that writes is taken to be
    destructive; an untrusted one brings in content from outside (the open world)."""
    spec = item.spec
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input_schema,
        annotations=types.ToolAnnotations(
            read_only_hint=item.read_only,
            destructive_hint=item.sensitive and not item.read_only,
            idempotent_hint=item.read_only,
            open_world_hint=item.untrusted,
        ),
    )


@dataclass(frozen=True)
class OfferedTools:
    """The listing and the calls of one MCP server; holds nothing that changes per call."""

    executor: ToolExecutor
    settings: Settings

    def listing(self) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[describe(t) for t in self.executor.registry])

    def context(self, session_key: str) -> ToolContext:
        """A client's session has a workspace of its own, as a chat's does."""
        return ToolContext(
            session_key=session_key,
            user=MCP_USER,
            platform="mcp",
            default_timezone=self.settings.timezone,
            workspace=workspace_of(self.settings.workspace_dir, session_key),
        )

    async def call(
        self, session_key: str, name: str, arguments: Mapping[str, Any] | None
    ) -> types.CallToolResult:
        """Run one call. An unknown tool and bad arguments are answered by the executor as
        for the model; each call gets an empty cache, since a client that asks again wants
        a fresh answer (the time now, not a minute ago)."""
        call = ToolUseBlock(id=uuid.uuid4().hex, name=name, input=dict(arguments or {}))
        outcome = await self.executor.run_one(call, self.context(session_key), {})
        return types.CallToolResult(
            content=[types.TextContent(text=outcome.content)], is_error=outcome.is_error
        )
