"""Which tools an MCP client is offered, how they are described, and what a call sees."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.assembly.catalog import standard_tools
from bot.assembly.offered import OfferedTools, describe, offered_tools
from bot.config.settings import Settings
from bot.sandbox.probe import unavailable
from bot.tools.base import ToolContext, ToolRegistry, tool
from bot.tools.executor import ToolExecutor
from bot.tools.workspace_paths import workspace_of


@tool(read_only=True, isolation="loop")
async def whoami(ctx: ToolContext) -> str:
    """Who the call is for, as the tool sees it."""
    return f"{ctx.session_key} {ctx.user.id} {ctx.platform} {ctx.workspace}"


@tool(sensitive=True)
async def erase(ctx: ToolContext, path: str) -> str:
    """Delete a file (needs approval)."""
    return f"erased {path}"


@tool(read_only=True, untrusted=True)
async def fetch(ctx: ToolContext, url: str) -> str:
    """Fetch a page from outside."""
    return "x" * 5000


@pytest.fixture
async def offered() -> AsyncIterator[OfferedTools]:
    executor = ToolExecutor(
        ToolRegistry([whoami, erase, fetch]), timeout=5, concurrency=2, output_limit=300
    )
    yield OfferedTools(executor, Settings(_env_file=None))
    await executor.aclose()


def test_the_database_s_tools_are_not_there_and_sensitive_ones_come_on_request() -> None:
    """`parley mcp` has no stores, so the tools built on them are not built at all."""
    tools = [*standard_tools(Settings(_env_file=None)), erase]
    plain = [t.name for t in offered_tools(tools, sensitive=False)]
    opted = [t.name for t in offered_tools(tools, sensitive=True)]
    readers = [
        "current_time",
        "calculator",
        "validate_json",
        "web_fetch",
        "read_file",
        "list_files",
    ]
    assert plain == readers
    sandboxed = {"run_python", "shell"} if unavailable() is None else set()
    actors = {"write_file", "erase"} | sandboxed
    assert set(opted) == set(readers) | actors


def test_the_hints_follow_what_parley_knows_of_a_tool() -> None:
    reading, erasing, fetching = describe(whoami), describe(erase), describe(fetch)
    assert reading.annotations is not None and erasing.annotations is not None
    assert fetching.annotations is not None
    assert (reading.annotations.read_only_hint, reading.annotations.destructive_hint) == (
        True,
        False,
    )
    assert (erasing.annotations.read_only_hint, erasing.annotations.destructive_hint) == (
        False,
        True,
    )
    assert fetching.annotations.open_world_hint is True
    assert reading.annotations.open_world_hint is False
    assert erasing.input_schema == erase.spec.input_schema
    assert erasing.input_schema["required"] == ["path"]


async def test_a_call_runs_for_the_mcp_client_in_its_session_s_workspace(
    offered: OfferedTools,
) -> None:
    result = await offered.call("mcp:http:ide", "whoami", None)
    assert not result.is_error
    folder = workspace_of(Settings(_env_file=None).workspace_dir, "mcp:http:ide")
    assert result.content[0].text == f"mcp:http:ide mcp mcp {folder}"  # type: ignore[union-attr]


async def test_output_is_cut_and_marked_as_from_outside_as_for_the_model(
    offered: OfferedTools,
) -> None:
    result = await offered.call("mcp:stdio", "fetch", {"url": "https://example.org"})
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error
    assert "[output truncated: 5,000 characters in all, the first 300 shown]" in text
    assert "x" * 301 not in text
    assert "fetch" in text and text != "x" * 300  # wrapped as untrusted data


async def test_bad_arguments_are_an_error_result(offered: OfferedTools) -> None:
    result = await offered.call("mcp:stdio", "erase", {"path": 3})
    assert result.is_error
    text = result.content[0].text  # type: ignore[union-attr]
    assert text == "Invalid arguments for erase: path: Input should be a valid string"


def test_the_listing_is_the_executor_s_tools(offered: OfferedTools) -> None:
    assert [t.name for t in offered.listing().tools] == ["whoami", "erase", "fetch"]
