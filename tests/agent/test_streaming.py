"""Streamed text and tool calls through both real SDKs and the fake API server."""

from __future__ import annotations

from bot.vocabulary import events as ev
from bot.vocabulary.messages import ToolResultBlock
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, of_type, shown_text
from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec


async def test_text_streams_in_deltas(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    agent = make_agent()
    fake_llm.enqueue(Reply(text="Hello there, how can I help you today?", chunk_size=5))
    state = SessionState()
    events = await collect(agent, state, "hi")
    deltas = of_type(events, ev.TextDelta)
    assert len(deltas) >= 5
    assert shown_text(events) == "Hello there, how can I help you today?"
    done = completed(events)
    assert done.finish_reason == "end_turn" and done.iterations == 1
    usage = done.usage
    assert usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens > 0
    assert done.usage.output_tokens > 0
    assert [m.role for m in state.messages] == ["user", "assistant"]
    assert state.messages[1].text == "Hello there, how can I help you today?"
    assert state.turn is None
    assert fake_llm.rejected == []


async def test_state_changes_are_events(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    agent = make_agent()
    fake_llm.enqueue(Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]))
    fake_llm.enqueue(Reply(text="42"))
    events = await collect(agent, SessionState(), "6*7?")
    states = [(e.layer, e.state) for e in of_type(events, ev.StateChanged)]
    assert states == [
        ("turn", "init"),
        ("turn", "planning"),
        ("call", "calling"),
        ("turn", "executing"),
        ("call", "tool_executing"),
        ("turn", "observing"),
        ("turn", "planning"),
        ("call", "calling"),
        ("call", "streaming"),
        ("turn", "completed"),
    ]
    assert [e.number for e in of_type(events, ev.Iteration)] == [1, 2]


async def test_single_tool_call_round_trip(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    agent = make_agent()
    fake_llm.enqueue(
        Reply(
            text="Let me compute.", tool_calls=[ToolCallSpec("calculator", {"expression": "2^10"})]
        ),
        Reply(text="It is 1024."),
    )
    state = SessionState()
    events = await collect(agent, state, "2 to the 10th?")
    (start,) = of_type(events, ev.ToolCallStart)
    (result,) = of_type(events, ev.ToolCallResult)
    assert (start.name, start.arguments) == ("calculator", {"expression": "2^10"})
    assert (result.call_id, result.content, result.is_error) == (start.call_id, "1024", False)
    assert completed(events).text == "It is 1024."
    assert fake_llm.requests[1].tool_results() == [(start.call_id, "1024")]
    assert fake_llm.rejected == []


async def test_parallel_tool_calls_answered_together(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent()
    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec("calculator", {"expression": "1+1"}),
                ToolCallSpec("current_time", {"timezone": "Asia/Tokyo"}),
                ToolCallSpec("calculator", {"expression": "3*3"}),
            ]
        ),
        Reply(text="Done."),
    )
    state = SessionState()
    events = await collect(agent, state, "three things")
    results = of_type(events, ev.ToolCallResult)
    assert [r.name for r in results] == ["calculator", "current_time", "calculator"]
    assert results[0].content == "2" and results[2].content == "9"
    assert "time zone Asia/Tokyo" in results[1].content
    tool_message = state.messages[2]
    assert all(isinstance(b, ToolResultBlock) for b in tool_message.content)
    assert len(tool_message.content) == 3
    assert [r[1] for r in fake_llm.requests[1].tool_results()] == ["2", results[1].content, "9"]
    assert fake_llm.rejected == []


async def test_tool_errors_reach_the_model(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    agent = make_agent()
    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec("calculator", {"expr": "1"}),
                ToolCallSpec("calculator", '{"expression": "1+'),
                ToolCallSpec("teleport", {"to": "Mars"}),
                ToolCallSpec("calculator", {"expression": "1/0"}),
            ]
        ),
        Reply(text="Sorry."),
    )
    events = await collect(agent, SessionState(), "try")
    results = of_type(events, ev.ToolCallResult)
    assert all(r.is_error for r in results)
    assert results[0].content.startswith(
        "Invalid arguments for calculator: expression: Field required"
    )
    assert results[1].content.startswith(
        "Invalid arguments for calculator: arguments are not valid JSON"
    )
    assert results[2].content.startswith("Unknown tool 'teleport'")
    assert results[3].content.startswith("Cannot evaluate '1/0'")
    assert completed(events).finish_reason == "end_turn"
    assert len(fake_llm.requests[1].tool_results()) == 4
    assert fake_llm.rejected == []


async def test_multi_turn_context_grows_and_stays_valid(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent()
    state = SessionState()
    for n in range(3):
        fake_llm.enqueue(Reply(text=f"answer {n}"))
        await collect(agent, state, f"question {n}")
    body = fake_llm.requests[-1].body
    texts = str(body["messages"])
    assert "question 0" in texts and "answer 1" in texts and "question 2" in texts
    assert fake_llm.rejected == []
