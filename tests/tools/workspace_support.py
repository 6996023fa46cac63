"""What the workspace tests share: a context per session, and calling a tool as the model would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.config.settings import Settings
from bot.tools.base import Tool, ToolContext
from bot.tools.workspace_paths import session_dirname
from bot.vocabulary.envelope import Sender

SESSION = "tg:-100123:45"
OTHER = "slack:T1:C2:1700.1"


def context(base: Path, session: str = SESSION, **settings: Any) -> ToolContext:
    return ToolContext(session, Sender(id="tg:42"), Settings(workspace_dir=base, **settings))


def call(tool: Tool, ctx: ToolContext, **arguments: Any) -> str:
    """Validate `arguments` as the executor does, then run the tool's body right here."""
    values = dict(tool.arguments.model_validate(arguments))
    return tool.run_sync(ctx, values)


def home(ctx: ToolContext) -> Path:
    """Where the session's files are on disk."""
    return Path(ctx.settings.workspace_dir) / session_dirname(ctx.session_key)
