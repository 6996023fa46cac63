"""A turn past PARLEY_TURN_TIMEOUT stops like a /stop, keeps what it has, and says why.

These run with a short timeout; tests/integration/worker/test_turn_timeout.py waits out the default
against a real worker.
"""

from __future__ import annotations

import asyncio

from bot.agent.deadline import TOOL_NOTE, Deadline
from bot.vocabulary import events as ev
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, of_type, shown_text
from tests.agent.test_stops import assert_every_tool_use_answered, wait_forever
from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec

ENDING = "I stopped here: a reply may take 1 s at most, and this one ran out of time."


async def test_a_model_call_past_the_deadline_keeps_its_text(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(turn_timeout=1.0)
    gate = asyncio.Event()
    fake_llm.enqueue(
        Reply(text="Half of an answer that stalls", chunk_size=4, gate=gate, gate_after=4)
    )
    state = SessionState()
    events = await asyncio.wait_for(collect(agent, state, "talk"), 30)
    done = completed(events)
    assert done.finish_reason == "timed_out"
    cut, _, ending = shown_text(events).partition("\n\n")
    assert cut and "Half of an answer that stalls".startswith(cut)
    assert ending.startswith(ENDING) and ending.endswith(
        "Ask me to go on, or for something smaller."
    )
    kept = [m.text for m in state.messages if m.role == "assistant"]
    assert kept[0] and "Half of an answer that stalls".startswith(kept[0])
    assert kept[-1].startswith(ENDING)
    assert state.turn is None
    gate.set()
    fake_llm.enqueue(Reply(text="next"))
    again = await collect(agent, state, "go on")
    assert completed(again).text == "next" and completed(again).finish_reason == "end_turn"
    assert fake_llm.rejected == []


async def test_tools_past_the_deadline_are_closed_with_a_note(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(tools=[wait_forever], turn_timeout=1.0, tool_timeout=600)
    fake_llm.enqueue(Reply(text="Let me wait.", tool_calls=[ToolCallSpec("wait_forever", {})]))
    state = SessionState()
    events = await asyncio.wait_for(collect(agent, state, "wait"), 30)
    assert completed(events).finish_reason == "timed_out"
    (result,) = of_type(events, ev.ToolCallResult)
    assert result.content == TOOL_NOTE and result.is_error
    assert_every_tool_use_answered(state)
    assert ENDING in shown_text(events)
    fake_llm.enqueue(Reply(text="ok"))
    await collect(agent, state, "never mind")
    assert fake_llm.rejected == []


async def test_a_stop_before_the_deadline_is_a_stop(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(turn_timeout=600)
    gate = asyncio.Event()
    fake_llm.enqueue(
        Reply(text="Partial answer that never ends", chunk_size=4, gate=gate, gate_after=4)
    )
    cancel = asyncio.Event()

    async def stop_after_text(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.TextDelta):
            cancel.set()

    events = await asyncio.wait_for(
        collect(agent, SessionState(), "talk", cancel=cancel, on_event=stop_after_text), 30
    )
    assert completed(events).finish_reason == "cancelled"
    assert "ran out of time" not in shown_text(events)
    gate.set()


async def test_the_clock_stands_still_while_it_is_held() -> None:
    """A helper's wait for a person holds its parent's clock: held, the turn is not stopped
    however long the hold lasts; let go, it runs on with what was left, and stops then."""
    cancel = asyncio.Event()
    clock = Deadline(0.5, cancel)
    clock.start()
    await asyncio.sleep(0.1)
    with clock.held():
        with clock.held():  # two helpers wait at once; the first to be decided lets go
            left = clock.left
            await asyncio.sleep(0.8)
        assert clock.left == left and not cancel.is_set()
    assert 0 < clock.left <= left
    await asyncio.wait_for(cancel.wait(), 30)
    assert clock.passed


async def test_a_stopped_clock_is_not_started_again_by_a_hold_let_go() -> None:
    cancel = asyncio.Event()
    clock = Deadline(0.2, cancel)
    clock.start()
    with clock.held():
        clock.stop()  # the turn ended while a hold was on
    await asyncio.sleep(0.5)
    assert not cancel.is_set() and not clock.passed
