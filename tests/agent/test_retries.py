"""Retries: which failures are retried, how long Parley waits, and no duplicated text."""

from __future__ import annotations

import pytest

from bot.vocabulary import events as ev
from bot.vocabulary.state import SessionState
from tests.agent.conftest import MakeAgent, Sleeps, collect, completed, of_type, shown_text
from tests.fakes.llm import Fail, FakeLLM, Reply

OVERLOADED = {
    "anthropic": Fail(529, "overloaded_error", "Overloaded"),
    "openai": Fail(503, "server_error", "The server is overloaded"),
}


async def test_429_waits_out_retry_after(
    fake_llm: FakeLLM, make_agent: MakeAgent, sleeps: Sleeps
) -> None:
    agent = make_agent()
    fake_llm.enqueue(Fail(429, "rate_limit_error", "slow down", retry_after=7), Reply(text="ok"))
    events = await collect(agent, SessionState(), "hi")
    assert sleeps == [7.0]
    (retry,) = of_type(events, ev.Retrying)
    assert retry.attempt == 1 and retry.delay == 7.0 and "429" in retry.error
    assert completed(events).text == "ok"
    assert len(fake_llm.requests) == 2


async def test_overload_and_5xx_back_off_exponentially(
    fake_llm: FakeLLM, make_agent: MakeAgent, sleeps: Sleeps, api: str
) -> None:
    agent = make_agent(llm_attempts=4)
    fake_llm.enqueue(OVERLOADED[api], Fail(500), Fail(502), Reply(text="finally"))
    events = await collect(agent, SessionState(), "hi")
    assert sleeps == [1.0, 2.0, 4.0]
    assert completed(events).text == "finally"


async def test_backoff_is_capped(fake_llm: FakeLLM, make_agent: MakeAgent, sleeps: Sleeps) -> None:
    agent = make_agent(llm_attempts=7)
    fake_llm.enqueue(*[Fail(504)] * 6, Reply(text="ok"))
    await collect(agent, SessionState(), "hi")
    assert sleeps == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


async def test_gives_up_after_the_attempts(
    fake_llm: FakeLLM, make_agent: MakeAgent, sleeps: Sleeps
) -> None:
    agent = make_agent()
    fake_llm.enqueue(Fail(503), Fail(503), Fail(503), Reply(text="never"))
    state = SessionState()
    events = await collect(agent, state, "hi")
    assert len(fake_llm.requests) == 3 and sleeps == [1.0, 2.0]
    (error,) = of_type(events, ev.Error)
    assert "503" in error.message
    assert completed(events).finish_reason == "error"
    assert of_type(events, ev.StateChanged)[-1].state == "failed"
    assert [m.role for m in state.messages] == ["user"]


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (403, "permission_error"),
        (404, "not_found_error"),
    ],
)
async def test_client_errors_are_not_retried(
    fake_llm: FakeLLM, make_agent: MakeAgent, sleeps: Sleeps, status: int, kind: str
) -> None:
    agent = make_agent()
    fake_llm.enqueue(Fail(status, kind, "no"), Reply(text="unused"))
    events = await collect(agent, SessionState(), "hi")
    assert len(fake_llm.requests) == 1 and sleeps == []
    assert str(status) in of_type(events, ev.Error)[0].message
    assert completed(events).finish_reason == "error"


async def test_wrong_key_is_reported_without_leaking_it(
    fake_llm: FakeLLM, make_agent: MakeAgent
) -> None:
    secret = "sk-wrong-secret-1234567890"
    agent = make_agent(anthropic_api_key=secret, openai_api_key=secret)
    events = await collect(agent, SessionState(), "hi")
    (error,) = of_type(events, ev.Error)
    assert "401" in error.message and secret not in error.message
    assert secret not in str(events)


async def test_cut_stream_restarts_without_duplicated_text(
    fake_llm: FakeLLM, make_agent: MakeAgent, sleeps: Sleeps
) -> None:
    agent = make_agent()
    fake_llm.enqueue(
        Reply(text="The first attempt at an answer that is cut", chunk_size=4, cut_after=6),
        Reply(text="The complete answer."),
    )
    state = SessionState()
    events = await collect(agent, state, "hi")
    resets = of_type(events, ev.TextReset)
    assert len(resets) == 1 and sleeps == [1.0]
    first_reset = events.index(resets[0])
    assert of_type(events[:first_reset], ev.TextDelta)  # some text had been shown
    assert shown_text(events) == "The complete answer."
    assert state.messages[-1].text == "The complete answer."


async def test_error_event_mid_stream_is_retried(
    fake_llm: FakeLLM, make_agent: MakeAgent, sleeps: Sleeps, api: str
) -> None:
    agent = make_agent()
    mid = OVERLOADED[api]
    fake_llm.enqueue(
        Fail(mid.status, mid.error_type, mid.message, mid_stream=True), Reply(text="recovered")
    )
    events = await collect(agent, SessionState(), "hi")
    assert len(of_type(events, ev.Retrying)) == 1
    assert shown_text(events) == "recovered"


async def test_retry_after_beyond_the_limit_is_not_waited(
    fake_llm: FakeLLM, make_agent: MakeAgent, sleeps: Sleeps
) -> None:
    agent = make_agent(llm_max_retry_after=30)
    fake_llm.enqueue(Fail(429, "rate_limit_error", "come back tomorrow", retry_after=86400))
    events = await collect(agent, SessionState(), "hi")
    assert sleeps == [] and completed(events).finish_reason == "error"


async def test_a_stalled_stream_times_out_and_is_retried(
    fake_llm: FakeLLM, make_agent: MakeAgent, sleeps: Sleeps
) -> None:
    agent = make_agent(llm_timeout=0.3)
    fake_llm.enqueue(Reply(text="stalled", delay=2.0), Reply(text="fast"))
    events = await collect(agent, SessionState(), "hi")
    (retry,) = of_type(events, ev.Retrying)
    assert "API timed out" in retry.error
    assert shown_text(events) == "fast"
