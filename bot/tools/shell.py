"""`shell`: the model's commands, run by a POSIX shell in `run_python`'s sandbox.

The same sandbox and limits as `run_python` (`bot.sandbox`): its own namespaces, no network,
the system's programs read-only, CPU time, memory, wall-clock and output bounds, and files
left in `./out/` sent to the person within the turn's room (`bot.tools.python`). What a
shell adds is the session's files: the visible ones of its workspace are copied for the run
and shown read-only in `./workspace/` (`bot.sandbox.runner.visible_copy`: no hidden file, no
link), so `grep`, `sort`, `wc` or `awk` work on what the person and the agent saved, and
nothing the command does changes them (a result to keep goes to `./out/`, or through
`write_file`).

Anyone who can talk to the bot can make it run commands, so the tool is sensitive: a person
approves each call unless the policy says otherwise, and the policy's argument rules match
its `command` (`{"action": "deny", "tool": "shell", "args": {"command": "*curl*"}}`). It is
offered only where the sandbox works (`bot.sandbox.probe`), beside `run_python`.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bot.sandbox.limits import SandboxLimits
from bot.sandbox.report import describe
from bot.sandbox.runner import SandboxError
from bot.tools.base import Attachment, Tool, ToolContext, ToolError, ToolResult, tool
from bot.tools.python import sandboxed

MAX_COMMAND = 20_000  # characters: a script, not a data dump


def shell_tool(limits: SandboxLimits, timeout: float) -> Tool:
    """`shell` with the sandbox's `limits`, and a `timeout` for the whole call that outlasts
    the sandbox's own."""

    async def shell(
        ctx: ToolContext,
        command: Annotated[
            str,
            Field(
                description="A POSIX shell (sh) command or script; stdout and stderr are returned",
                max_length=MAX_COMMAND,
            ),
        ],
    ) -> ToolResult:
        """Run a shell command (POSIX sh, with the system's usual programs: grep, sed, awk,
        sort, find, wc, tar, python3) in an isolated sandbox and return its exit code and
        what it printed. The session's workspace files are in ./workspace/, read-only (a
        copy: nothing changes them); there is no network. Files it writes in ./out/ (up to
        10, {scratch} MB in all in one turn) are sent to the person. The run is stopped at
        its CPU time, memory, wall-clock and output limits, which the result names. Use it
        to search, count or transform the workspace's files, or for a quick command."""
        if not command.strip():
            raise ToolError("The command is empty; send the shell command to run.")
        workspace = str(ctx.workspace) if ctx.workspace is not None else None
        try:
            outcome = await sandboxed(ctx, command, limits, shell=True, workspace=workspace)
        except SandboxError as exc:
            raise ToolError(f"The sandbox could not run the command: {exc}") from None
        files = tuple(Attachment(file.name, file.data) for file in outcome.files)
        return ToolResult(describe(outcome, limits), files)

    shell.__doc__ = (shell.__doc__ or "").replace("{scratch}", str(limits.scratch_mb))
    return tool(sensitive=True, isolation="loop", timeout=timeout)(shell)
