"""`ask_user` in the agent loop: the turn suspends on the question alone, a bad call is a
tool error, and the answer becomes the call's result."""

from __future__ import annotations

from bot.agent.tool_step import ASK_ALONE
from bot.config.values import PolicyRule
from bot.tools.ask_user import SET_ASIDE, ask_user_tool
from bot.tools.builtin import builtin_tools
from bot.vocabulary import events as ev
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, of_type
from tests.agent.test_confirmation import SENT, send_message
from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec

ASK = ToolCallSpec(
    "ask_user", {"questions": [{"question": "Which colour?", "options": ["Red", "Blue"]}]}
)


def tools() -> list:  # type: ignore[type-arg]
    return [*builtin_tools(), send_message, ask_user_tool()]


async def test_the_question_waits_alone_and_its_answer_is_the_result(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    """A sensitive call in the same batch is not asked about: one thing waits at a time."""
    SENT.clear()
    agent = make_agent(tools=tools())
    send = ToolCallSpec("send_message", {"to": "bob", "text": "hi"})
    calc = ToolCallSpec("calculator", {"expression": "2+3"})
    fake_llm.enqueue(Reply(tool_calls=[ASK, send, calc]))
    state = SessionState()
    events = await collect(agent, state, "paint the shed")
    (asked,) = of_type(events, ev.ConfirmationRequired)
    assert [c.name for c in asked.calls] == ["ask_user"] and not asked.can_remember
    assert asked.questions[0].options == ["Red", "Blue"]
    assert completed(events).finish_reason == "awaiting_confirmation"
    results = {r.name: r for r in of_type(events, ev.ToolCallResult)}
    assert results["send_message"].is_error and results["send_message"].content == ASK_ALONE
    assert results["calculator"].content == "5" and SENT == []
    fake_llm.enqueue(Reply(text="Blue."))
    call_id = asked.calls[0].call_id
    resumed = await collect(agent, state, decisions={}, answers={call_id: "Ann answered: Blue"})
    assert completed(resumed).text == "Blue."
    sent_back = dict(fake_llm.requests[1].tool_results())
    assert sent_back[call_id] == "Ann answered: Blue"
    assert fake_llm.rejected == []


async def test_a_bad_call_is_an_error_the_model_reads_and_nothing_waits(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(tools=tools())
    bad = ToolCallSpec("ask_user", {"questions": [{"question": "?", "options": ["only"]}]})
    fake_llm.enqueue(Reply(tool_calls=[bad]), Reply(text="Let me ask properly."))
    state = SessionState()
    events = await collect(agent, state, "paint the shed")
    assert of_type(events, ev.ConfirmationRequired) == []
    (result,) = of_type(events, ev.ToolCallResult)
    assert result.is_error and "options: List should have at least 2 items" in result.content
    assert completed(events).text == "Let me ask properly."


async def test_a_denying_rule_takes_the_tool_away(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    agent = make_agent(tools=tools(), policy=[PolicyRule(action="deny", tool="ask_user")])
    fake_llm.enqueue(Reply(tool_calls=[ASK]), Reply(text="I will guess."))
    events = await collect(agent, SessionState(), "paint the shed")
    (result,) = of_type(events, ev.ToolCallResult)
    assert result.is_error and "policy does not allow ask_user" in result.content


async def test_a_new_message_instead_of_an_answer_sets_the_question_aside(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(tools=tools())
    fake_llm.enqueue(Reply(tool_calls=[ASK]), Reply(text="Something else, then."))
    state = SessionState()
    await collect(agent, state, "paint the shed")
    await collect(agent, state, "never mind")
    ((_, result),) = fake_llm.requests[1].tool_results()
    assert result == SET_ASIDE


async def test_a_rule_that_allows_everything_still_asks_the_question(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    """Allowing `ask_user` cannot run it: only a person can answer it."""
    agent = make_agent(tools=tools(), policy=[PolicyRule(action="allow", tool="*")])
    fake_llm.enqueue(Reply(tool_calls=[ASK]))
    events = await collect(agent, SessionState(), "paint the shed")
    assert len(of_type(events, ev.ConfirmationRequired)) == 1
    assert of_type(events, ev.ToolCallResult) == []
