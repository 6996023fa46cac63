"""A turn the model's API failed does not poison its session: a request refused as invalid
takes the turn out of the context and says so; after a passing failure the question is kept
and the next turn is asked to answer both. Both APIs, through their real SDKs."""

from __future__ import annotations

import json

from bot.agent.failed_turn import ANSWER_BOTH
from bot.vocabulary import events as ev
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, of_type
from tests.fakes.llm import Fail, FakeLLM, Reply, ToolCallSpec

REFUSED = Fail(400, "invalid_request_error", "messages.1.content: this content is refused")


def error_of(events: list[ev.AgentEvent]) -> str:
    (error,) = of_type(events, ev.Error)
    assert completed(events).finish_reason == ev.FinishReason.ERROR
    return str(error.message)


def sent(fake: FakeLLM, index: int = -1) -> str:
    """Everything the conversation of request `index` said (not its system prompt), as JSON."""
    messages = fake.requests[index].body["messages"]
    return json.dumps([m for m in messages if m["role"] not in ("system", "developer")])


async def test_a_refused_request_leaves_the_context_and_the_next_message_is_answered(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent()
    state = SessionState()
    fake_llm.enqueue(Reply(text="Hello."), REFUSED, REFUSED, Reply(text="Fine."))
    await collect(agent, state, "hi")
    before = [message.model_copy(deep=True) for message in state.messages]
    said = error_of(await collect(agent, state, "the poisoned one"))
    assert "400" in said and "left your message out of our conversation" in said
    assert state.messages == before and not state.unanswered
    said = error_of(await collect(agent, state, "the poisoned one, again"))
    assert state.messages == before  # refused again: out again, nothing merged
    events = await collect(agent, state, "something else")
    assert completed(events).text == "Fine."
    assert "poisoned" not in sent(fake_llm) and "something else" in sent(fake_llm)
    assert len(fake_llm.requests) == 4  # a refused request is never asked again


async def test_a_refusal_after_tool_calls_takes_the_whole_turn_out(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    """What the turn's tools brought (a result the API would not take) goes with it."""
    agent = make_agent()
    state = SessionState()
    fake_llm.enqueue(
        Reply(text="Hi."),
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "2+2"})]),
        REFUSED,
        Reply(text="Next."),
    )
    await collect(agent, state, "hello")
    kept = len(state.messages)
    error_of(await collect(agent, state, "add 2 and 2"))
    assert len(state.messages) == kept
    assert completed(await collect(agent, state, "go on")).text == "Next."
    assert "calculator" not in sent(fake_llm) and "2+2" not in sent(fake_llm)


async def test_after_a_passing_failure_the_next_turn_answers_both(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(llm_attempts=1)
    state = SessionState()
    fake_llm.enqueue(Fail(503), Reply(text="Both answered."))
    said = error_of(await collect(agent, state, "what is the capital of Peru?"))
    assert "503" in said and "Your message is kept" in said
    assert state.unanswered
    events = await collect(agent, state, "and of Chile?")
    assert completed(events).text == "Both answered."
    last = fake_llm.requests[-1]
    assert "capital of Peru" in sent(fake_llm) and "and of Chile?" in last.last_user_text()
    assert ANSWER_BOTH in last.last_user_text()
    assert not state.unanswered
    assert [m.role for m in state.messages] == ["user", "assistant"]


async def test_a_refusal_after_a_passing_failure_keeps_the_question_that_waits(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(llm_attempts=1)
    state = SessionState()
    fake_llm.enqueue(Fail(503), REFUSED, Reply(text="Answered."))
    error_of(await collect(agent, state, "first question"))
    error_of(await collect(agent, state, "the refused one"))
    assert state.unanswered  # the first question still waits
    assert completed(await collect(agent, state, "third")).text == "Answered."
    asked = sent(fake_llm)
    assert "first question" in asked and "third" in asked and "refused one" not in asked
    assert asked.count(ANSWER_BOTH.replace('"', '\\"')) == 1


async def test_a_refused_key_or_an_unknown_model_keeps_the_message(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    """A 401, 403 or 404 is the deployment's to mend, not the message's fault: it stays."""
    agent = make_agent()
    state = SessionState()
    fake_llm.enqueue(Fail(404, "not_found_error", "model: claude-nope"), Reply(text="Both."))
    said = error_of(await collect(agent, state, "first"))
    assert "404" in said and "Your message is kept" in said and state.unanswered
    assert completed(await collect(agent, state, "second")).text == "Both."
    assert "first" in sent(fake_llm) and ANSWER_BOTH in fake_llm.requests[-1].last_user_text()
