"""The `delegate` tool: hand a self-contained task to a helper, a child run with its own
fresh context, and get its answer back as the call's result.

The tool is made when the agent is, before the worker that will run its helpers has
connected to Redis, so it reaches them through a `HelperLink` the worker binds once at
start (`bot.session.helpers.HelperRuns`); where none is bound (a process that runs no
turns), a call says helpers are not available.

It is marked `read_only` because running it again is harmless: a call is keyed by its id,
so a turn resumed after its worker died runs the same call again and finds the same helper
(running, or finished with its answer) rather than starting another.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated, Protocol

from pydantic import Field

from bot.config.settings import Settings
from bot.tools.base import Tool, ToolContext, ToolError, ToolResult, tool
from bot.vocabulary.envelope import MAX_TEXT
from bot.vocabulary.helpers import TOOL

WAIT_SLACK_S = 60.0  # the call's own timeout, beyond its helper's: pick-up, a takeover


class Delegation(Protocol):
    async def delegate(
        self, ctx: ToolContext, task: str, tools: Collection[str] | None, model: str | None
    ) -> ToolResult: ...


class HelperLink:
    """Where the `delegate` tool finds the worker's helpers, bound once at start."""

    def __init__(self) -> None:
        self.runs: Delegation | None = None

    def bind(self, runs: Delegation) -> None:
        self.runs = runs


def delegate_tool(settings: Settings, link: HelperLink) -> Tool:
    @tool(
        name=TOOL,
        read_only=True,
        isolation="loop",
        # A helper's request may wait for a person (PARLEY_CONFIRMATION_TTL) before it runs.
        timeout=settings.delegate_timeout + settings.confirmation_ttl + WAIT_SLACK_S,
    )
    async def delegate(
        ctx: ToolContext,
        task: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_TEXT,
                description="The whole task, self-contained: the helper sees nothing else of "
                "this conversation. Say what to find or do and what to answer with.",
            ),
        ],
        tools: Annotated[
            list[str] | None,
            Field(description="The tools the helper may use (default: all yours it may have)."),
        ] = None,
        model: Annotated[
            str | None, Field(description="The model the helper runs on (default: yours).")
        ] = None,
    ) -> ToolResult:
        """Hand a self-contained task to a helper: a separate run with a fresh context, its
        own step, token and time limits, and a subset of your tools. It returns the helper's
        final answer. Several delegate calls in one reply run in parallel, so split work
        that has independent parts (research several things, check several sources) into
        one call each; a turn starts only a few helpers, and calls past them do not run.
        The helper cannot ask the user questions; a tool it needs approved is asked in this
        chat."""
        runs = link.runs
        if runs is None:
            raise ToolError("Helpers are not available here.")
        return await runs.delegate(ctx, task, tools, model)

    return delegate
