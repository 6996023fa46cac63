"""A turn resumed after its worker stopped (a SIGTERM, a crash) goes on from its last saved
step, and a turn whose final answer was already kept is not answered a second time."""

from __future__ import annotations

from bot.agent.deps import TurnRequest
from bot.vocabulary import events as ev
from bot.vocabulary.run_config import RunConfig
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, context, shown_text
from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec


async def test_a_turn_stopped_after_its_answer_was_kept_ends_without_asking_again(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    """The window: the answer is saved as the model finishes, the turn's end is saved after
    its last events went out; a worker stopped in between leaves the answer in a turn still
    open. Resumed, the turn shows that answer and ends; the model is not asked again."""
    agent = make_agent()
    fake_llm.enqueue(Reply(text="The whole answer."), Reply(text="A second answer."))
    saved: list[SessionState] = []

    async def checkpoint(state: SessionState) -> None:
        saved.append(state.model_copy(deep=True))

    state = SessionState()
    request = TurnRequest(context(agent), text="tell me", config=RunConfig())
    async for _ in agent.run(state, request, checkpoint=checkpoint):
        pass
    (kept,) = [s for s in saved if s.turn is not None and s.messages[-1].role == "assistant"]
    resumed = await collect(agent, kept)  # no text, no decisions: a resume
    assert len(fake_llm.requests) == 1
    assert completed(resumed).finish_reason == "end_turn"
    assert completed(resumed).text == "The whole answer."
    assert shown_text(resumed) == "The whole answer."
    assert [m.text for m in kept.messages if m.role == "assistant"] == ["The whole answer."]
    assert kept.turn is None and kept.finished == state.finished


async def test_a_turn_stopped_after_its_tool_results_asks_the_model_for_its_answer(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    """The other side: a turn whose last saved step is a tool's result still needs the
    model's answer, and gets it."""
    agent = make_agent()
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "2+3"})]),
        Reply(text="It is 5."),
        Reply(text="It is 5, again."),
    )
    saved: list[SessionState] = []

    async def checkpoint(state: SessionState) -> None:
        saved.append(state.model_copy(deep=True))

    state = SessionState()
    request = TurnRequest(context(agent), text="2+3?", config=RunConfig())
    async for _ in agent.run(state, request, checkpoint=checkpoint):
        pass
    after_tools = [s for s in saved if s.turn is not None and s.messages[-1].tool_results]
    resumed = await collect(agent, after_tools[-1])
    assert len(fake_llm.requests) == 3
    assert completed(resumed).text == "It is 5, again."
    assert isinstance(resumed[-1], ev.Completed)
