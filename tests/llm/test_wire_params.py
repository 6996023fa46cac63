"""How Parley's messages are put on the wire for each API (pure translation, no network)."""

from __future__ import annotations

import json
from typing import Any

from bot.llm import anthropic as anthropic_wire
from bot.llm import openai as openai_wire
from bot.llm.base import ModelRequest, SystemPart, ToolSpec
from bot.vocabulary.messages import Message, PerMessage, TextBlock, ToolResultBlock, ToolUseBlock

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
    """The body is encoded from each message's kept JSON, and the same request's messages
    change the way the loop changes them between calls: the last message takes more blocks
    or has one replaced, messages are added, the context is compacted into new messages.
    Each body is what the parameters say, breakpoint on the new last message included."""
    for model, wire, extra in (
        ("claude-x", anthropic_wire, {"stream": True}),
        ("gpt-4o", openai_wire, {"stream": True, "stream_options": {"include_usage": True}}),
    ):
        sent = request(model)
        sent.messages.insert(1, Message(role="assistant", content=[TextBlock(text="")]))

        def same(wire: Any = wire, sent: ModelRequest = sent, extra: Any = extra) -> None:
            assert json.loads(wire.encode_body(sent)) == {**wire.build_params(sent), **extra}

        same()
        sent.messages[-1].content.append(TextBlock(text="and 4+4?"))
        same()
        sent.messages[-1].content[0] = ToolResultBlock(tool_use_id="t1", content="four")
        same()
        sent.messages.append(Message(role="assistant", content=[TextBlock(text="8")]))
        same()
        kept = [m.model_copy(deep=True) for m in sent.messages[-2:]]
        kept[0].content[0] = ToolResultBlock(tool_use_id="t1", content="[removed]")
        sent.messages[:] = kept
        same()
        assert "[removed]" in wire.encode_body(sent).decode()


def test_what_is_kept_per_message_is_made_again_only_for_what_changed() -> None:
    """Made once per message while the context only grows; again for the last message
    changed in place, for a block replaced, for a context cut back and for a new context."""
    made: list[str] = []

    def text_of(message: Message) -> str:
        made.append(message.text)
        return message.text

    kept = PerMessage(text_of)
    context = [Message(role="user", content=[TextBlock(text="one")])]
    assert kept.values(context) == ["one"]
    context.append(Message(role="assistant", content=[TextBlock(text="two")]))
    assert kept.values(context) == ["one", "two"] and made == ["one", "two"]
    context[-1].content.append(TextBlock(text="2"))  # the last message, changed in place
    context.append(Message(role="user", content=[TextBlock(text="three")]))
    assert kept.values(context) == ["one", "two\n2", "three"]
    assert made == ["one", "two", "two\n2", "three"]
    context[-1].content[0] = TextBlock(text="3")  # a block replaced
    assert kept.values(context)[-1] == "3"
    del context[1:]  # a failed turn taken out, back to the first message, which it cuts
    context[0].content.append(TextBlock(text="uno"))
    assert kept.values(context) == ["one\nuno"]
    copies = [m.model_copy(deep=True) for m in context]  # compacted: new messages
    made.clear()
    assert kept.values(copies) == ["one\nuno"] and made == ["one\nuno"]
    assert kept.values(copies) == ["one\nuno"] and made == ["one\nuno"]
