"""How a turn ends: repeats, the iteration cap, cancellation, tool timeouts."""

from __future__ import annotations

import asyncio

from bot.tools.base import ToolContext, tool
from bot.tools.builtin import builtin_tools
from bot.vocabulary import events as ev
from bot.vocabulary.messages import ToolResultBlock
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, of_type, shown_text
from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec


def assert_every_tool_use_answered(state: SessionState) -> None:
    for index, message in enumerate(state.messages):
        if message.tool_uses:
            answers = state.messages[index + 1].tool_results
            assert sorted(r.tool_use_id for r in answers) == sorted(u.id for u in message.tool_uses)


async def test_repeated_identical_call_is_warned_then_stopped(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent()
    fake_llm.responder = lambda _: Reply(
        tool_calls=[ToolCallSpec("calculator", {"expression": "1+1"})]
    )
    state = SessionState()
    events = await collect(agent, state, "loop forever")
    results = of_type(events, ev.ToolCallResult)
    assert [r.content for r in results[:2]] == ["2", "2"]
    assert results[2].is_error and "3 times in a row" in results[2].content
    assert results[3].content == "Not run: the turn was stopped."
    assert len(fake_llm.requests) == 4
    done = completed(events)
    assert done.finish_reason == "doom_loop"
    assert "kept calling calculator with the same arguments" in done.text
    assert state.messages[-1].text == done.text
    assert_every_tool_use_answered(state)
    assert fake_llm.rejected == []


async def test_iteration_cap_ends_the_turn(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    agent = make_agent(max_iterations=3)
    count = iter(range(100))
    fake_llm.responder = lambda _: Reply(
        tool_calls=[ToolCallSpec("calculator", {"expression": f"{next(count)}+1"})]
    )
    state = SessionState()
    events = await collect(agent, state, "count")
    assert len(fake_llm.requests) == 3
    done = completed(events)
    assert done.finish_reason == "max_iterations" and done.iterations == 3
    assert "I stopped after 3 steps" in shown_text(events)
    assert_every_tool_use_answered(state)
    # The next turn starts cleanly from there.
    fake_llm.responder = None
    fake_llm.enqueue(Reply(text="fresh"))
    assert completed(await collect(agent, state, "again")).text == "fresh"
    assert fake_llm.rejected == []


@tool
async def wait_forever(ctx: ToolContext) -> str:
    """Never finishes on its own."""
    await asyncio.Event().wait()
    return "unreachable"


async def test_tool_timeout_becomes_a_result(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    agent = make_agent(tools=[*builtin_tools(), wait_forever], tool_timeout=0.2)
    fake_llm.enqueue(Reply(tool_calls=[ToolCallSpec("wait_forever", {})]), Reply(text="gave up"))
    events = await collect(agent, SessionState(), "wait")
    (result,) = of_type(events, ev.ToolCallResult)
    assert (
        result.is_error and result.content == "wait_forever timed out after 0.2 s and was stopped."
    )
    assert completed(events).text == "gave up"


async def test_cancel_mid_stream_keeps_the_text(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    agent = make_agent()
    gate = asyncio.Event()
    fake_llm.enqueue(
        Reply(text="Partial answer that never ends", chunk_size=4, gate=gate, gate_after=4)
    )
    cancel = asyncio.Event()

    async def stop_after_text(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.TextDelta):
            cancel.set()

    state = SessionState()
    events = await asyncio.wait_for(
        collect(agent, state, "talk", cancel=cancel, on_event=stop_after_text), 10
    )
    done = completed(events)
    assert done.finish_reason == "cancelled"
    shown = shown_text(events)
    assert shown and "Partial answer that never ends".startswith(shown)
    assert state.messages[-1].role == "assistant" and state.messages[-1].text == shown
    gate.set()
    fake_llm.enqueue(Reply(text="next"))
    assert completed(await collect(agent, state, "go on")).text == "next"
    assert fake_llm.rejected == []


async def test_cancel_during_tools_closes_every_call(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(tools=[*builtin_tools(), wait_forever])
    await agent.warm()  # the calculator's helper process, as a worker does
    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec("calculator", {"expression": "1+1"}),
                ToolCallSpec("wait_forever", {}),
            ]
        )
    )
    cancel = asyncio.Event()

    async def stop_on_start(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.StateChanged) and event.state == "tool_executing":
            asyncio.get_running_loop().call_later(0.2, cancel.set)

    state = SessionState()
    events = await asyncio.wait_for(
        collect(agent, state, "go", cancel=cancel, on_event=stop_on_start), 10
    )
    assert completed(events).finish_reason == "cancelled"
    results = {r.name: r for r in of_type(events, ev.ToolCallResult)}
    assert results["calculator"].content == "2"
    assert results["wait_forever"].content == "Cancelled by the user before it finished."
    assert_every_tool_use_answered(state)
    blocks = state.messages[-1].content
    assert all(isinstance(b, ToolResultBlock) for b in blocks) and len(blocks) == 2
    fake_llm.enqueue(Reply(text="ok"))
    await collect(agent, state, "never mind")
    assert fake_llm.rejected == []


async def test_max_tokens_finish_is_reported(
    fake_llm: FakeLLM, make_agent: MakeAgent, api: str
) -> None:
    agent = make_agent()
    stop = "max_tokens" if api == "anthropic" else "length"
    fake_llm.enqueue(Reply(text="A long answer that was cut", stop_reason=stop))
    assert completed(await collect(agent, SessionState(), "essay")).finish_reason == "max_tokens"
