"""Parley's own tools, as these settings and stores offer them.

One list for every process that names tools: the worker's agent, what lists them for people
and operators (`/tools` in a chat and `GET /api/tools`, read from `parley web`'s catalog),
`parley doctor`'s count, and `parley mcp`, which serves them to other MCP clients; so what
is listed, counted and switched off is what the model is offered. Each tool is built with
what it needs and nothing more (`bot.assembly.tool_settings`): a store, a few limits, a key.
A tool that needs something the operator did not configure (a search backend), the machine
cannot provide (the sandbox of `run_python`), or the process does not have (the database's
stores: `parley mcp` and `parley chat` have none; helpers to run: only a worker runs turns)
is left out here, rather than failing when the model calls it (`generate_image` without
PARLEY_IMAGE_MODEL). A process that lists a worker's tools without running turns
(`worker_tools`) builds `delegate` on a link to no helpers: its name, description and schema
are the worker's, and it is never called there.
"""

from __future__ import annotations

from bot.assembly.delegate import HelperLink, delegate_tool
from bot.assembly.stores import ToolStores
from bot.assembly.tool_settings import (
    fetch_limits,
    image_service,
    sandbox_limits,
    search_service,
    send_file_limit,
    task_rules,
    workspace_limits,
)
from bot.config.settings import Settings
from bot.files.store import FileStore
from bot.memory.tools import memory_tools
from bot.people.preferences import ModelChoices
from bot.people.tools import people_tools
from bot.sandbox.probe import unavailable
from bot.tasks.tools import task_tools
from bot.tools.ask_user import ask_user_tool
from bot.tools.base import Tool
from bot.tools.builtin import builtin_tools
from bot.tools.images import image_tools
from bot.tools.python import python_tool
from bot.tools.send_file import send_file_tool
from bot.tools.shell import shell_tool
from bot.tools.web.tools import web_tools
from bot.tools.workspace import workspace_tools
from bot.vocabulary.helpers import TOOL as DELEGATE

# The tools built on the database's stores, offered only where there are stores; their
# names stay Parley's everywhere, so a tool module cannot take one where they are absent.
DATABASE_TOOLS = (
    "schedule_task",
    "list_tasks",
    "cancel_task",
    "set_timezone",
    "remember",
    "forget",
    "recall",
    "set_preferences",
)
# The tools that send the person something in the conversation (or ask them something),
# which an MCP client has not.
CHAT_TOOLS = ("send_file", "ask_user", "generate_image")
# Names only Parley's own tools take, in every process, whether or not it offers them there.
RESERVED = (*DATABASE_TOOLS, DELEGATE)


def database_tools(settings: Settings, stores: ToolStores) -> list[Tool]:
    """The scheduled-task, memory and preference tools, each on the store it works on."""
    return [
        *task_tools(stores.tasks, stores.people, task_rules(settings)),
        *memory_tools(stores.recall),
        *people_tools(stores.people, ModelChoices.of(settings)),
    ]


def sandbox_tools(settings: Settings) -> list[Tool]:
    """`run_python` and `shell` where the sandbox works."""
    if unavailable() is not None:
        return []
    limits = sandbox_limits(settings)
    return [python_tool(*limits), shell_tool(*limits)]


def delegation(settings: Settings, helpers: HelperLink | None) -> list[Tool]:
    """`delegate` where there are `helpers` to run it, unless PARLEY_DELEGATE_DEPTH is 0."""
    if helpers is None or settings.delegate_depth == 0:
        return []
    return [delegate_tool(settings, helpers)]


def standard_tools(
    settings: Settings, stores: ToolStores | None = None, helpers: HelperLink | None = None
) -> list[Tool]:
    """Parley's own tools where there are `stores` (or none) and `helpers` (or none)."""
    return [
        *builtin_tools(),
        *(database_tools(settings, stores) if stores is not None else []),
        *web_tools(fetch_limits(settings), search_service(settings)),
        *workspace_tools(workspace_limits(settings)),
        send_file_tool(send_file_limit(settings)),
        *image_tools(image_service(settings), FileStore(settings.files_dir)),
        ask_user_tool(),
        *sandbox_tools(settings),
        *delegation(settings, helpers),
    ]


def worker_tools(settings: Settings, stores: ToolStores) -> list[Tool]:
    """Parley's own tools as a worker's agent offers them, for a process that lists or
    counts them and runs no turn (see the module doc)."""
    return standard_tools(settings, stores, HelperLink())
