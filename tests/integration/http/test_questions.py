"""`ask_user` over the HTTP API: the question on the stream, listed while it waits, answered
all at once (strictly read), or by the next message in the asker's own words."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from bot.redis.confirmations import CallSummary, Confirmations
from bot.vocabulary.questions import Answer, Question
from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.stack import Stack, read_events, send, texts

QUESTIONS = [
    {"question": "Which colour?", "options": ["Red", "Blue"]},
    {"question": "When?", "options": ["Today", "Tomorrow"]},
]


async def ask(stack: Stack, client: httpx.AsyncClient) -> tuple[str, dict[str, Any]]:
    stack.fake.enqueue(Reply(tool_calls=[ToolCallSpec("ask_user", {"questions": QUESTIONS})]))
    session = await stack.session(client)
    events = await send(client, session, "paint the shed")
    (asked,) = [e for e in events if e["type"] == "confirmation_required"]
    assert events[-1]["finish_reason"] == "awaiting_confirmation"
    assert [q["question"] for q in asked["questions"]] == ["Which colour?", "When?"]
    return session, asked


async def test_a_client_lists_the_question_and_answers_it(stack: Stack) -> None:
    await stack.start_worker()
    async with stack.client() as client:
        session, asked = await ask(stack, client)
        waiting = (await client.get(f"/api/sessions/{session}/confirmations")).json()
        (listed,) = waiting["confirmations"]
        assert listed["id"] == asked["confirmation_id"] and listed["status"] == "pending"
        assert listed["questions"][1]["options"] == ["Today", "Tomorrow"]
        url = f"/api/confirmations/{asked['confirmation_id']}"
        bad = [
            {"answers": [{"option": 0}]},  # one of two
            {"answers": [{"option": 2}, {"option": 0}]},  # no third option
            {"answers": [{"option": 0, "other": "x"}, {"option": 0}]},
            {"decision": "approve"},  # a question is answered, not approved
            {"answers": [{"option": 0}, {"option": 0}], "decision": "approve"},
            {"answers": [{"option": True}, {"option": "1"}]},  # no option numbers
            {"answers": [{"option": 0}, {"other": ""}]},
        ]
        for body in bad:
            answer = await client.post(url, json=body)
            assert answer.status_code in (400, 422), (body, answer.text)
        assert len(stack.fake.requests) == 1
        stack.fake.enqueue(Reply(text="Blue, soon."))
        async with client.stream(
            "POST",
            url,
            json={"answers": [{"option": 1}, {"other": "when it stops raining"}]},
            headers={"Accept": "text/event-stream"},
        ) as response:
            assert response.status_code == 200, await response.aread()
            events = await read_events(response)
        again = await client.post(url, json={"answers": [{"option": 0}, {"option": 0}]})
        after = (await client.get(f"/api/sessions/{session}/confirmations")).json()
    assert texts(events) == "Blue, soon."
    result = stack.fake.requests[1].tool_results()[0][1]
    assert result.startswith("The person answered:")
    assert '"Which colour?" → "Blue"' in result
    assert '"When?" → in their own words: "when it stops raining"' in result
    assert again.status_code == 409 and again.json()["status"] == "answered"
    assert after == {"confirmations": []}


async def test_the_next_message_answers_in_the_persons_own_words(stack: Stack) -> None:
    await stack.start_worker()
    async with stack.client() as client:
        session, asked = await ask(stack, client)
        stack.fake.enqueue(Reply(text="Green, then."))
        events = await send(client, session, "green, any day")
        late = await client.post(
            f"/api/confirmations/{asked['confirmation_id']}",
            json={"answers": [{"option": 0}, {"option": 0}]},
        )
    assert texts(events) == "Green, then."
    assert len(stack.fake.requests) == 2
    result = stack.fake.requests[1].tool_results()[0][1]
    assert result.count('in their own words: "green, any day"') == 2
    assert late.status_code == 409


async def test_a_question_is_never_approved_and_an_approval_never_answered(
    redis_url: str,
) -> None:
    """A forged press of the other kind's button (Approve on a question, an option on an
    approval) changes nothing."""
    redis = Redis.from_url(redis_url)
    confirmations = Confirmations(redis)
    calls = [CallSummary(call_id="c1", name="ask_user", arguments={})]
    question = Question(question="Which colour?", options=["Red", "Blue"])
    asked = await confirmations.create("tg:1", "e1", "tg:ann", calls, 60, questions=[question])
    approval = await confirmations.create("tg:1", "e2", "tg:ann", calls, 60)
    assert await confirmations.decide(asked.id, "approved", "tg:ann") == "unknown"
    assert await confirmations.decide(asked.id, "denied", "tg:boss", is_admin=True) == "unknown"
    red = [Answer(text="Red")]
    assert await confirmations.answer(approval.id, red, "tg:ann", start=0) == "unknown"
    assert await confirmations.answer(asked.id, red, "tg:bob", start=0) == "forbidden"
    assert await confirmations.answer(asked.id, red, "tg:ann", start=1) == "stale"
    assert (await confirmations.get(asked.id)).status == "pending"  # type: ignore[union-attr]
    assert (await confirmations.get(approval.id)).status == "pending"  # type: ignore[union-attr]
    assert await confirmations.answer(asked.id, red, "tg:ann", start=0) == "ok"
    assert await confirmations.decide(asked.id, "declined", "x", is_admin=True) == "decided"
    await redis.aclose()


@pytest.mark.parametrize(
    "stack", [{"PARLEY_CONFIRMATION_TTL": "6", "PARLEY_CONFIRMATION_REMIND": "4"}], indirect=True
)
async def test_a_client_following_the_session_sees_the_reminder_then_the_expiry(
    stack: Stack,
) -> None:
    await stack.start_worker()
    async with stack.client() as client:
        session, asked = await ask(stack, client)
        stack.fake.enqueue(Reply(text="No answer, so I will wait."))
        seen: list[dict[str, Any]] = []
        async with client.stream("GET", f"/api/sessions/{session}/events") as response:
            async for line in response.aiter_lines():
                if line.startswith("data: "):
                    seen.append(json.loads(line[6:]))
                    if seen[-1]["type"] == "completed":
                        break
    (reminder,) = [e for e in seen if e["type"] == "reminder"]
    assert reminder["confirmation_id"] == asked["confirmation_id"]
    assert seen.index(reminder) == 0  # before the turn went on
    assert texts(seen) == "No answer, so I will wait."
    assert stack.fake.requests[1].tool_results()[0][1].startswith("No answer: the person did not")
