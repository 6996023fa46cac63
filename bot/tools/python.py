"""`run_python`: the model's programs, run in the sandbox (`bot.sandbox`).

Anyone who can talk to the bot can make it run code here, so the tool is sensitive (a
person approves each call unless the policy says otherwise) and is offered only where the
machine provides the whole sandbox (`bot.sandbox.probe`). It runs on the worker's loop: the
program is a separate process, watched without blocking. It is built with the sandbox's
limits (`python_tool`), the operator's PARLEY_SANDBOX_* settings. The files the program
writes in `./out/` come back beside its output (`bot.sandbox.outputs`) and are sent to the
person (`bot.agent.attachments`): "plot this CSV" ends in a chart in the chat. What comes
back is what the turn has room for (`ToolContext.files`): a run takes that room before it
starts and gives back what its files did not use, so runs of one turn, at once or one
after another, together hand back at most the sandbox's scratch size (`SCRATCH_MB`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bot.sandbox import packages
from bot.sandbox.limits import SandboxLimits
from bot.sandbox.outputs import MAX_FILES, Bound
from bot.sandbox.report import describe
from bot.sandbox.runner import Outcome, SandboxError, run_program
from bot.tools.base import Attachment, Tool, ToolContext, ToolError, ToolResult, tool

MAX_PROGRAM = 100_000  # characters: a program, not a data dump (a workspace file is for that)
LIBRARIES = {
    True: "The standard library is available, and matplotlib (with numpy and Pillow) for charts",
    False: "Only the standard library is available (no matplotlib, numpy or Pillow here)",
}
EXTRA_SECONDS = 10.0  # the executor's timeout leaves the sandbox time to stop and report
MB = 1_048_576


def python_tool(limits: SandboxLimits, timeout: float) -> Tool:
    """`run_python` with the sandbox's `limits`, and a `timeout` for the whole call that
    outlasts the sandbox's own (`EXTRA_SECONDS`)."""

    async def run_python(
        ctx: ToolContext,
        code: Annotated[
            str,
            Field(
                description="A complete Python 3 program; print what you want to see",
                max_length=MAX_PROGRAM,
            ),
        ],
    ) -> ToolResult:
        """Run a Python 3 program in an isolated sandbox and return its exit code and what it
        printed (stdout and stderr together). {libraries}; there is no network at all and no files
        from earlier runs: each run starts in a working directory (its HOME, deleted
        afterwards) that holds only an empty ./out/ folder, and may write small files there.
        Files it writes in ./out/ (such as plt.savefig("out/chart.png") or a CSV; up to 10,
        and {scratch} MB in all in one turn) are sent to the person, images shown as
        pictures; to work on a workspace file, put its content in the program. The run is
        stopped at its CPU time, memory, wall-clock and output limits, which the result
        names when one was reached.
        Use it to compute, parse or check things exactly, or to draw a chart."""
        if not code.strip():
            raise ToolError("The program is empty; send the Python source to run.")
        try:
            outcome = await sandboxed(ctx, code, limits)
        except SandboxError as exc:
            raise ToolError(f"The sandbox could not run the program: {exc}") from None
        files = tuple(Attachment(file.name, file.data) for file in outcome.files)
        return ToolResult(describe(outcome, limits), files)

    # The model is told of matplotlib only where the sandbox offers it (the `charts` extra).
    charts = packages.offers_charts()
    doc = (run_python.__doc__ or "").replace("{libraries}", LIBRARIES[charts])
    run_python.__doc__ = doc.replace("{scratch}", str(limits.scratch_mb))
    return tool(sensitive=True, isolation="loop", timeout=timeout)(run_python)


async def sandboxed(
    ctx: ToolContext,
    code: str,
    limits: SandboxLimits,
    *,
    shell: bool = False,
    workspace: str | None = None,
) -> Outcome:
    """Run `code` (a shell script, with `workspace`, when `shell`: `bot.tools.shell`) with
    the room its turn has left for files, given back as far as unused."""
    most = (MAX_FILES, limits.scratch_mb * MB)
    room = ctx.files
    taken = room.take(*most) if room is not None else most
    used = (0, 0)
    try:
        outcome = await run_program(code, limits, Bound(*taken), shell=shell, workspace=workspace)
        used = (len(outcome.files), sum(len(file.data) for file in outcome.files))
        return outcome
    finally:
        if room is not None:
            room.settle(taken, *used)
