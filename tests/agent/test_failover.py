"""Failing over to PARLEY_FALLBACK_MODELS, through both real SDKs and the fake APIs: only for
a model that stays overloaded, rate limited or out of reach, never for a request it refused;
what the failed model showed taken back; the fallback answering the rest of the turn."""

from __future__ import annotations

import pytest

from bot.vocabulary import events as ev
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, collect, completed, of_type, shown_text
from tests.fakes.llm import Fail, FakeLLM, Reply, ToolCallSpec

FALLBACK = {"fallback_models": ["gpt-fallback", "claude-last"], "llm_attempts": 1}


@pytest.mark.parametrize("api", ["anthropic"])
async def test_the_turn_goes_on_on_the_next_model_and_stays_there(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(**FALLBACK)
    fake_llm.enqueue(
        Fail(529, "overloaded_error", "Overloaded", mid_stream=True),  # shows "Partial text "
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text="42, says the fallback."),
    )
    state = SessionState()
    events = await collect(agent, state, "6*7?")
    [switched] = of_type(events, ev.FailedOver)
    assert (switched.failed, switched.model) == ("claude-test", "gpt-fallback")
    assert shown_text(events) == "42, says the fallback."  # the partial text was taken back
    assert [r.api for r in fake_llm.requests] == ["anthropic", "openai", "openai"]
    assert [m.model for m in state.messages if m.role == "assistant"] == ["gpt-fallback"] * 2
    assert [e.model for e in of_type(events, ev.Iteration)] == ["claude-test", "gpt-fallback"]
    assert completed(events).model == "gpt-fallback"
    fake_llm.enqueue(Reply(text="Back on the default."))
    again = await collect(agent, state, "and now?")  # a new turn asks the default again
    assert completed(again).model == "claude-test"


@pytest.mark.parametrize("api", ["anthropic"])
async def test_a_refused_request_and_the_last_model_do_not_fail_over(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    agent = make_agent(**FALLBACK)
    fake_llm.enqueue(Fail(400, "invalid_request_error", "prompt is too long"))
    events = await collect(agent, SessionState(), "hi")
    assert of_type(events, ev.FailedOver) == [] and len(fake_llm.requests) == 1
    assert completed(events).finish_reason == "error"
    fake_llm.enqueue(*[Fail(429, "rate_limit_error", "Slow down")] * 3)
    events = await collect(agent, SessionState(), "hi")
    chain = [(e.failed, e.model) for e in of_type(events, ev.FailedOver)]
    assert chain == [("claude-test", "gpt-fallback"), ("gpt-fallback", "claude-last")]
    assert completed(events).finish_reason == "error"
    assert [r.body["model"] for r in fake_llm.requests[1:]] == [
        "claude-test", "gpt-fallback", "claude-last"
    ]  # fmt: skip
