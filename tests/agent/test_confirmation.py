"""Tools the policy says to ask about suspend the turn until a person decides."""

from __future__ import annotations

from bot.config.values import PolicyRule
from bot.tools.base import ToolContext, tool
from bot.tools.builtin import builtin_tools
from bot.vocabulary import events as ev
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, of_type
from tests.fakes.llm import FakeLLM, Reply, ToolCallSpec

SENT: list[str] = []


@tool(sensitive=True)
async def send_message(ctx: ToolContext, to: str, text: str) -> str:
    """Send a message to someone on the user's behalf."""
    SENT.append(f"{to}: {text}")
    return f"sent to {to}"


def tools() -> list:  # type: ignore[type-arg]
    return [*builtin_tools(), send_message]


async def ask_for_send(fake: FakeLLM, make_agent: MakeAgent, **settings: object) -> tuple:  # type: ignore[type-arg]
    SENT.clear()
    agent = make_agent(tools=tools(), **settings)
    fake.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec("send_message", {"to": "bob", "text": "hi"}),
                ToolCallSpec("calculator", {"expression": "2+3"}),
            ]
        )
    )
    state = SessionState()
    events = await collect(agent, state, "tell bob hi, and what is 2+3")
    return agent, state, events


async def test_sensitive_tool_suspends_and_approval_runs_it(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent, state, events = await ask_for_send(fake_llm, make_agent)
    (ask,) = of_type(events, ev.ConfirmationRequired)
    assert [(c.name, c.arguments) for c in ask.calls] == [
        ("send_message", {"to": "bob", "text": "hi"})
    ]
    assert completed(events).finish_reason == "awaiting_confirmation"
    assert SENT == []
    assert state.pending is not None and state.pending.waiting == [ask.calls[0].call_id]
    assert len(fake_llm.requests) == 1
    # The allowed call already ran; its result waits with the batch.
    assert [r.content for r in of_type(events, ev.ToolCallResult)] == ["5"]

    fake_llm.enqueue(Reply(text="Sent, and it is 5."))
    resumed = await collect(agent, state, decisions={ask.calls[0].call_id: True})
    assert SENT == ["bob: hi"]
    assert [r.content for r in of_type(resumed, ev.ToolCallResult)] == ["sent to bob"]
    assert completed(resumed).text == "Sent, and it is 5."
    assert sorted(c for _, c in fake_llm.requests[1].tool_results()) == ["5", "sent to bob"]
    assert state.pending is None and state.turn is None
    assert fake_llm.rejected == []


async def test_denial_tells_the_model(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    agent, state, events = await ask_for_send(fake_llm, make_agent)
    (ask,) = of_type(events, ev.ConfirmationRequired)
    fake_llm.enqueue(Reply(text="OK, I did not send it."))
    resumed = await collect(agent, state, decisions={ask.calls[0].call_id: False})
    assert SENT == []
    (result,) = of_type(resumed, ev.ToolCallResult)
    assert result.is_error and result.content == "Denied by the user."
    assert completed(resumed).finish_reason == "end_turn"
    assert fake_llm.rejected == []


async def test_new_message_instead_of_a_decision_declines(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent, state, _ = await ask_for_send(fake_llm, make_agent)
    fake_llm.enqueue(Reply(text="Sure, something else."))
    events = await collect(agent, state, "actually, forget it")
    assert SENT == []
    assert completed(events).text == "Sure, something else."
    request = fake_llm.requests[1]
    assert "Not run: the user sent a new message instead of deciding." in str(
        request.tool_results()
    )
    assert "actually, forget it" in request.last_user_text()
    assert state.pending is None
    assert fake_llm.rejected == []


async def test_a_decision_with_nothing_pending_changes_nothing(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent()
    state = SessionState()
    events = await collect(agent, state, decisions={"x": True})
    assert of_type(events, ev.Error)[0].message == "Nothing is waiting for a decision."
    assert completed(events).finish_reason == "nothing_pending"
    assert state.messages == [] and fake_llm.requests == []


async def test_policy_rules_allow_deny_and_ask(fake_llm: FakeLLM, make_agent: MakeAgent) -> None:
    rules = [
        PolicyRule(action="allow", tool="send_message", args={"to": "bob"}),
        PolicyRule(action="deny", tool="calc*"),
    ]
    agent, _, events = await ask_for_send(fake_llm, make_agent, policy=rules)
    assert SENT == ["bob: hi"] and not of_type(events, ev.ConfirmationRequired)
    results = {r.name: r for r in of_type(events, ev.ToolCallResult)}
    assert results["calculator"].content == "Not run: the policy does not allow calculator here."

    agent = make_agent(tools=tools(), policy=[PolicyRule(action="ask", tool="calculator")])
    fake_llm.enqueue(Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "1"})]))
    events = await collect(agent, SessionState(), "1?")
    assert [c.name for c in of_type(events, ev.ConfirmationRequired)[0].calls] == ["calculator"]


async def test_always_allowed_tools_run_without_asking_unless_the_rule_forbids_it(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    _, _, events = await ask_for_send(fake_llm, make_agent)
    assert of_type(events, ev.ConfirmationRequired)[0].can_remember
    rules = [PolicyRule(action="ask", tool="send_message", remember=False)]
    _, _, strict = await ask_for_send(fake_llm, make_agent, policy=rules)
    assert not of_type(strict, ev.ConfirmationRequired)[0].can_remember
    agent = make_agent(tools=tools())
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCallSpec("send_message", {"to": "ann", "text": "yo"})]),
        Reply(text="Sent."),
    )
    later = await collect(agent, SessionState(), "tell ann yo", allowed=("send_message",))
    assert of_type(later, ev.ConfirmationRequired) == []
    assert SENT == ["ann: yo"]
