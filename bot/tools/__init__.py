"""Parley's API for people who write tools: what a module named in PARLEY_TOOL_MODULES imports.

    from bot.tools import ToolContext, ToolError, tool

A tool module defines `@tool` functions and lists them in `TOOLS`. These names are the promise
made to those modules and are pinned by a test; everything else under `bot.tools` (the
executor, the registry, where tools run) is Parley's own and may change between releases.
"Writing a tool" in docs/TOOLS.md has a complete example.
"""

from bot.tools.base import (
    Attachment,
    FileRoom,
    TemporaryFailure,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    tool,
)
from bot.vocabulary.envelope import Sender

__all__ = [
    "Attachment",
    "FileRoom",
    "Sender",
    "TemporaryFailure",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "tool",
]
