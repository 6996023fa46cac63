"""What the workspace tests share: the tools as a worker builds them, a context per session,
and calling a tool as the model would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.assembly.tool_settings import workspace_limits
from bot.config.settings import Settings
from bot.tools.base import Tool, ToolContext
from bot.tools.workspace import workspace_tools
from bot.tools.workspace_paths import workspace_of
from bot.vocabulary.envelope import Sender

SESSION = "tg:-100123:45"
OTHER = "slack:T1:C2:1700.1"


def built(**settings: Any) -> dict[str, Tool]:
    """The workspace tools as a worker builds them from these settings, by name."""
    limits = workspace_limits(Settings(_env_file=None, **settings))
    return {item.name: item for item in workspace_tools(limits)}


read_file, write_file, list_files = built().values()


def context(base: Path, session: str = SESSION) -> ToolContext:
    """A call in `session`, whose workspace is in `base` (PARLEY_WORKSPACE_DIR)."""
    return ToolContext(session, Sender(id="tg:42"), workspace=workspace_of(base, session))


def call(tool: Tool, ctx: ToolContext, **arguments: Any) -> str:
    """Validate `arguments` as the executor does, then run the tool's body right here."""
    values = dict(tool.arguments.model_validate(arguments))
    result = tool.run_sync(ctx, values)
    assert isinstance(result, str)
    return result


def home(ctx: ToolContext) -> Path:
    """Where the session's files are on disk."""
    assert ctx.workspace is not None
    return ctx.workspace
