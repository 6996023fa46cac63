"""An HTTP session's reasoning: chosen when it is made or later, shown by the session's
record, streamed as `thinking_delta`, refused clearly when it is not one."""

from __future__ import annotations

import pytest

from tests.fakes.llm import Reply
from tests.support.stack import Stack, recorded, send, texts

pytestmark = pytest.mark.e2e
THOUGHT = "A greeting; answer in kind."


async def test_a_session_thinks_as_it_was_told_and_shows_it(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.responder = lambda request: Reply(thinking=THOUGHT, text="Hi.")
    async with stack.client() as client:
        made = await client.post("/api/sessions", json={"reasoning": "stream"})
        assert made.status_code == 201 and made.json()["reasoning"] == "stream"
        session = made.json()["id"]
        events = await send(client, session, "hello")
        thinking = [e["text"] for e in events if e["type"] == "thinking_delta"]
        assert "".join(thinking) == THOUGHT and texts(events) == "Hi."
        assert (await recorded(stack, session, 2))["reasoning"] == "stream"
        changed = await client.patch(f"/api/sessions/{session}", json={"reasoning": "off"})
        assert changed.json() == {"id": session, "reasoning": "off"}
        events = await send(client, session, "again")
        assert [e for e in events if e["type"] == "thinking_delta"] == []
        detail = await recorded(stack, session, 4)
        assert detail["reasoning"] == "off" and detail["mode"] == "react"
    first, second = stack.fake.requests
    assert first.body["thinking"]["display"] == "summarized" and "thinking" not in second.body


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({}, "give mode, reasoning, model, tools or output_schema"),
        ({"reasoning": "loud"}, "reasoning: Input should be 'off', 'hidden', 'on' or 'stream'"),
    ],
)
async def test_a_change_that_is_not_one_is_refused(
    stack: Stack, body: dict[str, str], problem: str
) -> None:
    async with stack.client() as client:
        made = await client.post("/api/sessions")
        response = await client.patch(f"/api/sessions/{made.json()['id']}", json=body)
    assert response.status_code == 422
    assert any(problem in said for said in response.json()["problems"]), response.json()
