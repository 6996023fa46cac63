"""The @tool decorator: schema from the signature, docstring as description, typed context."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import Field

from bot.tools.base import ToolContext, ToolRegistry, tool
from bot.tools.builtin import builtin_tools
from bot.vocabulary.envelope import Sender


@tool(sensitive=True, timeout=5)
async def send_email(
    ctx: ToolContext,
    to: Annotated[str, Field(description="Recipient address")],
    subject: str,
    priority: Literal["low", "high"] = "low",
    copies: int = 1,
) -> dict[str, object]:
    """Send an email on the user's behalf."""
    return {"to": to, "subject": subject, "by": ctx.user.id, "priority": priority, "n": copies}


def test_schema_comes_from_the_signature() -> None:
    spec = send_email.spec
    assert spec.name == "send_email"
    assert spec.description == "Send an email on the user's behalf."
    schema = spec.input_schema
    assert schema["type"] == "object"
    assert schema["required"] == ["to", "subject"]
    assert schema["properties"]["to"]["description"] == "Recipient address"
    assert schema["properties"]["priority"]["enum"] == ["low", "high"]
    assert schema["properties"]["copies"]["type"] == "integer"
    assert schema["additionalProperties"] is False
    assert send_email.sensitive and not send_email.read_only and send_email.timeout == 5


async def test_call_gets_the_context_and_serialises_non_text_results() -> None:
    ctx = ToolContext("s1", Sender(id="tg:7", name="Ann"))
    args = send_email.arguments.model_validate({"to": "a@b.c", "subject": "hi"})
    assert await send_email(ctx, args) == (
        '{"to": "a@b.c", "subject": "hi", "by": "tg:7", "priority": "low", "n": 1}'
    )


def test_contract_violations_are_refused_at_definition_time() -> None:
    with pytest.raises(TypeError, match="only an async function may run on the loop"):

        @tool(isolation="loop")
        def sync_tool(ctx: ToolContext) -> str:
            """Not async, so it would block the loop."""
            return ""

    with pytest.raises(ValueError, match="docstring"):

        @tool
        async def undocumented(ctx: ToolContext) -> str:
            return ""

    with pytest.raises(ValueError, match="must match"):

        @tool(name="has space")
        async def bad_name(ctx: ToolContext) -> str:
            """Bad name."""
            return ""


def test_registry_refuses_duplicates_and_lists_specs() -> None:
    registry = ToolRegistry(builtin_tools())
    assert registry.names == ["calculator", "current_time", "validate_json"]
    assert [s.name for s in registry.specs] == ["current_time", "calculator", "validate_json"]
    with pytest.raises(ValueError, match="twice"):
        registry.register(builtin_tools()[0])
