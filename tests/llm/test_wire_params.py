"""How Parley's messages are put on the wire for each API (pure translation, no network)."""

from __future__ import annotations

import json

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


def test_the_encoded_body_is_the_parameters_also_after_the_context_changes() -> None:
    """The body is encoded from each message's kept JSON: a message changed in place (a user
    message taking more blocks) or a block replaced (compaction blanking a tool output) is
    sent as it is now, and the breakpoint moves to the new last message."""
    for model, wire, extra in (
        ("claude-x", anthropic_wire, {"stream": True}),
        ("gpt-4o", openai_wire, {"stream": True, "stream_options": {"include_usage": True}}),
    ):
        sent = request(model)
        sent.messages.insert(1, Message(role="assistant", content=[TextBlock(text="")]))
        assert json.loads(wire.encode_body(sent)) == {**wire.build_params(sent), **extra}
        sent.messages[-1].content.append(TextBlock(text="and 4+4?"))
        sent.messages[2].content[1] = ToolUseBlock(id="t1", name="current_time")
        assert json.loads(wire.encode_body(sent)) == {**wire.build_params(sent), **extra}
        sent.messages.append(Message(role="assistant", content=[TextBlock(text="8")]))
        body = json.loads(wire.encode_body(sent))
        assert body == {**wire.build_params(sent), **extra}
        assert "and 4+4?" in json.dumps(body) and "current_time" in json.dumps(body["messages"])


def test_what_is_derived_from_a_message_is_made_again_only_when_its_blocks_change() -> None:
    made: list[str] = []

    def size(message: Message) -> int:
        made.append(message.text)
        return len(message.model_dump_json())

    message = Message(role="user", content=[TextBlock(text="one")])
    first = message.derived("size", size)
    assert message.derived("size", size) == first and made == ["one"]
    message.content.append(TextBlock(text="two"))
    assert message.derived("size", size) > first and made == ["one", "one\ntwo"]
    message.content[0] = TextBlock(text="uno")
    message.derived("size", size)
    del message.content[1:]
    message.derived("size", size)
    assert made == ["one", "one\ntwo", "uno\ntwo", "uno"]
    copy = message.model_copy(deep=True)
    assert copy == message and copy.derived("size", size) == message.derived("size", size)
