"""An MCP server's tools as Parley's: named for their server, checked against their own
schema, approved as the server's `trust` says, and their results read as text."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest
from mcp_types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcp_types import Tool as McpTool

from bot.config.values import PolicyRule
from bot.mcp.config import ServerConfig
from bot.mcp.results import result_text
from bot.mcp.tools import mcp_tools
from bot.tools.base import Tool, ToolError
from bot.tools.policy import Policy

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "lines": {"type": "integer", "minimum": 1}},
    "required": ["path"],
}
LISTED = [
    McpTool(name="read_file", description="Read a file.", input_schema=SCHEMA),
    McpTool(name="delete_file", description="Delete a file.", input_schema=SCHEMA),
    McpTool(name="list_dir", input_schema={"type": "object"}),
]


async def no_call(tool: str, arguments: dict[str, Any]) -> str:
    raise AssertionError("not called here")


def tools_of(skipped: set[str] | None = None, **keys: Any) -> dict[str, Tool]:
    config = ServerConfig.model_validate({"command": "server-files", **keys})
    return mcp_tools("files", config, LISTED, no_call, timeout=12, skipped=skipped or set())


def test_each_tool_is_named_for_its_server_and_runs_as_an_outside_call() -> None:
    tools = tools_of()
    assert sorted(tools) == ["files__delete_file", "files__list_dir", "files__read_file"]
    read = tools["files__read_file"]
    assert read.spec.input_schema == SCHEMA
    assert "Read a file." in read.description and "'files'" in read.description
    assert (read.isolation, read.untrusted, read.read_only, read.timeout) == (
        "loop",
        True,
        False,
        12,
    )


def test_arguments_are_checked_against_the_servers_schema() -> None:
    arguments = tools_of()["files__read_file"].arguments
    assert dict(arguments.model_validate({"path": "/a", "lines": 3})) == {"path": "/a", "lines": 3}
    for bad, problem in [
        ({}, "'path' is a required property"),
        ({"path": "/a", "lines": 0}, "lines: 0 is less than the minimum of 1"),
        ({"path": 5}, "path: 5 is not of type 'string'"),
    ]:
        with pytest.raises(ValueError, match=problem):
            arguments.model_validate(bad)


def test_a_servers_patterns_are_matched_in_linear_time() -> None:
    """Arguments the model wrote against a backtracking pattern get their verdict at once
    (Python's `re` would take longer than the age of the universe here); a pattern only a
    backtracking engine runs is left to the server, which checks its input again."""
    schema = {
        "type": "object",
        "properties": {"word": {"type": "string", "pattern": "^(a+)+$"}},
        "patternProperties": {"^(x|x)+$": {"type": "integer"}, "(?=y)y": {"type": "string"}},
    }
    listed = [McpTool(name="spell", input_schema=schema)]
    config = ServerConfig.model_validate({"command": "server-words"})
    tool = mcp_tools("words", config, listed, no_call, timeout=12, skipped=set())["words__spell"]
    with pytest.raises(ValueError, match="does not match"):
        tool.arguments.model_validate({"word": "a" * 100 + "!"})
    with pytest.raises(ValueError, match="is not of type 'integer'"):
        tool.arguments.model_validate({"x" * 100: "many"})
    assert dict(tool.arguments.model_validate({"word": "aaa", "yes": "y"})) == {
        "word": "aaa", "yes": "y",
    }  # fmt: skip


@pytest.mark.parametrize(("trust", "sensitive"), [("ask", True), ("allow", False)])
def test_trust_decides_whether_a_call_waits_for_approval(trust: str, sensitive: bool) -> None:
    tool = tools_of(trust=trust)["files__read_file"]
    assert tool.sensitive is sensitive
    expected = "ask" if sensitive else "allow"
    assert Policy().decide(tool, tool.name, {"path": "/a"}) == expected
    operator = Policy([PolicyRule(action="deny", tool="files__*")])
    assert operator.decide(tool, tool.name, {"path": "/a"}) == "deny"


def test_globs_choose_which_tools_are_offered() -> None:
    assert sorted(tools_of(tools={"deny": ["delete_*"]})) == ["files__list_dir", "files__read_file"]
    assert sorted(tools_of(tools={"allow": ["read_*", "delete_*"], "deny": ["delete_*"]})) == [
        "files__read_file"
    ]


def test_a_tool_whose_name_would_be_too_long_is_skipped_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    long = McpTool(name="x" * 60, input_schema={"type": "object"})
    dotted = McpTool(name="read.file", input_schema={"type": "object"})
    config = ServerConfig.model_validate({"command": "server-files"})
    skipped: set[str] = set()
    with caplog.at_level(logging.WARNING, logger="bot.mcp.tools"):
        for _ in range(2):
            tools = mcp_tools(
                "files", config, [*LISTED, long, dotted], no_call, timeout=1, skipped=skipped
            )
            assert len(tools) == 3
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2
    assert "longer than 64 characters" in warnings[0] and "letters, digits" in warnings[1]


def test_results_read_as_text() -> None:
    png = base64.b64encode(bytes(12 * 1024)).decode()
    result = CallToolResult(
        content=[
            TextContent(text="Here it is."),
            ImageContent(data=png, mime_type="image/png"),
            EmbeddedResource(resource=TextResourceContents(uri="file:///a.txt", text="line 1")),
            ResourceLink(uri="file:///b.txt", name="b"),
        ],
    )
    assert result_text("files", result) == (
        "Here it is.\n[image/png, 12 KB]\nline 1\nfile:///b.txt"
    )
    structured = CallToolResult(content=[], structured_content={"temperature": 21.5})
    assert json.loads(result_text("weather", structured)) == {"temperature": 21.5}
    failed = CallToolResult(content=[TextContent(text="no such file: /a")], is_error=True)
    with pytest.raises(ToolError, match=r"^no such file: /a$"):
        result_text("files", failed)
