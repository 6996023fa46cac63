"""How Parley's messages are put on the wire for each API (pure translation, no network)."""

from __future__ import annotations

from bot.llm import anthropic as anthropic_wire
from bot.llm import openai as openai_wire
from bot.llm.base import ModelRequest, SystemPart, ToolSpec
from bot.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock

SCHEMA = {"type": "object", "properties": {"expression": {"type": "string"}}}


def conversation() -> list[Message]:
    return [
        Message(role="user", content=[TextBlock(text="[Sun 10:00]"), TextBlock(text="2+2?")]),
        Message(
            role="assistant",
            content=[
                TextBlock(text="Let me check."),
                ToolUseBlock(id="t1", name="calculator", input={"expression": "2+2"}),
                ToolUseBlock(
                    id="t2", name="calculator", input={}, raw_input="{oops", input_error="bad JSON"
                ),
            ],
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(tool_use_id="t1", content="4"),
                ToolResultBlock(tool_use_id="t2", content="Invalid arguments", is_error=True),
                TextBlock(text="and 3+3?"),
            ],
        ),
    ]


def request(model: str) -> ModelRequest:
    return ModelRequest(
        model=model,
        system=[SystemPart("You are Parley."), SystemPart("Today is Sunday.", stable=False)],
        messages=conversation(),
        tools=[ToolSpec("calculator", "Maths.", SCHEMA), ToolSpec("current_time", "Time.", SCHEMA)],
        max_tokens=100,
    )


def test_anthropic_cache_breakpoints_on_tools_system_and_conversation() -> None:
    params = anthropic_wire.build_params(request("claude-x"))
    assert "cache_control" in params["tools"][-1] and "cache_control" not in params["tools"][0]
    assert params["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in params["system"][1]
    last = params["messages"][-1]["content"][-1]
    assert last == {"type": "text", "text": "and 3+3?", "cache_control": {"type": "ephemeral"}}
    marked = [b for m in params["messages"] for b in m["content"] if "cache_control" in b]
    assert len(marked) == 1


def test_anthropic_blocks_keep_their_shape() -> None:
    messages = anthropic_wire.build_params(request("claude-x"))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"][1] == {
        "type": "tool_use",
        "id": "t1",
        "name": "calculator",
        "input": {"expression": "2+2"},
    }
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "tool_result", "text"]
    assert messages[2]["content"][1]["is_error"] is True


def test_openai_tool_results_become_tool_messages_right_after_the_call() -> None:
    params = openai_wire.build_params(request("gpt-4o"))
    roles = [m["role"] for m in params["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]
    assert params["messages"][0]["content"] == "You are Parley.\n\nToday is Sunday."
    assert params["messages"][1]["content"] == "[Sun 10:00]\n2+2?"
    calls = params["messages"][2]["tool_calls"]
    assert calls[0]["function"] == {"name": "calculator", "arguments": '{"expression": "2+2"}'}
    assert calls[1]["function"]["arguments"] == "{oops"  # what the model sent, kept verbatim
    assert params["messages"][3] == {"role": "tool", "tool_call_id": "t1", "content": "4"}
    assert params["max_tokens"] == 100
    assert params["tools"][0]["function"]["parameters"] == SCHEMA


def test_openai_reasoning_models_get_max_completion_tokens() -> None:
    params = openai_wire.build_params(request("o3-mini"))
    assert params["max_completion_tokens"] == 100 and "max_tokens" not in params
