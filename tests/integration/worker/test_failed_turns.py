"""A message the model's API refuses does not fail the session's later messages, and one a
passing failure left unanswered is answered with the next: a real worker with the default
settings, its state in Redis between turns, the fake model behind the real SDK."""

from __future__ import annotations

from typing import Any

from tests.fakes.llm import Fail, Reply
from tests.support.stack import Stack, send, texts


def error_of(events: list[dict[str, Any]]) -> str:
    errors = [event["message"] for event in events if event["type"] == "error"]
    assert len(errors) == 1, events
    return str(errors[0])


async def test_a_refused_message_is_left_out_and_a_passing_failure_is_answered_next(
    stack: Stack,
) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Fail(400, "invalid_request_error", "this content is refused"),
        Reply(text="Hello."),
        *[Fail(529, "overloaded_error", "Overloaded")] * 3,  # beyond the default retries
        Reply(text="Lima, and Santiago."),
    )
    async with stack.client() as client:
        session = await stack.session(client)
        refused = error_of(await send(client, session, "the refused message"))
        hello = texts(await send(client, session, "hello"))
        kept = error_of(await send(client, session, "capital of Peru?"))
        both = texts(await send(client, session, "and of Chile?"))
    assert "left your message out" in refused and hello == "Hello."
    assert "refused message" not in stack.fake.requests[1].last_user_text()
    assert "Your message is kept" in kept and both == "Lima, and Santiago."
    last = stack.fake.requests[-1].last_user_text()
    assert "capital of Peru?" in last and "and of Chile?" in last
    assert "refused message" not in last
    async with stack.client() as client:
        series = (await client.get("/api/metrics/series")).json()
    errors = sorted(error["error"] for error in series["errors"])
    # the record keeps the provider's own words, not the advice the person was given
    assert errors == [
        "Anthropic API error 400 invalid_request_error: this content is refused",
        "Anthropic API error 529 overloaded_error: Overloaded",
    ]
