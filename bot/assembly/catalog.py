"""Parley's own tools, as these settings offer them.

One list for every process that names tools: the worker's agent, the API's `/api/tools`, and
`parley mcp`, which serves them to other MCP clients. A tool that needs something the
operator did not configure (a search backend), or the machine cannot provide (the sandbox
of `run_python`), is left out here, rather than failing when the model calls it.
"""

from __future__ import annotations

from dataclasses import replace

from bot.config.settings import Settings
from bot.memory.tools import memory_tools
from bot.people.tools import people_tools
from bot.sandbox.probe import unavailable
from bot.tasks.tools import task_tools
from bot.tools.base import Tool
from bot.tools.builtin import builtin_tools
from bot.tools.python import EXTRA_SECONDS, run_python
from bot.tools.web.tools import web_tools
from bot.tools.workspace import workspace_tools


def sandbox_tools(settings: Settings) -> list[Tool]:
    """`run_python` where the sandbox works, with a timeout that outlasts the sandbox's."""
    if unavailable() is not None:
        return []
    timeout = max(settings.tool_timeout, settings.sandbox_timeout + EXTRA_SECONDS)
    return [replace(run_python, timeout=timeout)]


def standard_tools(settings: Settings) -> list[Tool]:
    return [
        *builtin_tools(),
        *task_tools(),
        *memory_tools(),
        *people_tools(),
        *web_tools(settings),
        *workspace_tools(),
        *sandbox_tools(settings),
    ]
