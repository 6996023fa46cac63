"""An API run started from a given transcript (`initial_messages`), through a real web app
and worker and the fake model behind the real SDK: the model reads the transcript before the
task, in order; a transcript that does not take turns is refused before anything is queued."""

from __future__ import annotations

import json

from tests.fakes.llm import Reply
from tests.support.stack import Stack

GIVEN = [
    {"role": "user", "content": "My name is Ann and I live in Porto."},
    {"role": "assistant", "content": "Nice to meet you, Ann."},
]


async def test_a_run_reads_its_transcript_before_its_task(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.responder = lambda request: Reply(text="You are Ann, from Porto.")
    async with stack.client() as client:
        answer = await client.post(
            "/api/agent/run",
            json={"task": "Who am I?", "initial_messages": GIVEN},
            timeout=60,
        )
    assert answer.status_code == 200, answer.text
    assert answer.json()["text"] == "You are Ann, from Porto."
    [request] = stack.fake.requests
    messages = request.body["messages"]
    said = [(m["role"], json.dumps(m["content"])) for m in messages]
    assert [role for role, _ in said] == ["user", "assistant", "user"]
    assert "My name is Ann" in said[0][1] and "Nice to meet you" in said[1][1]
    assert "Who am I?" in said[2][1]


async def test_a_transcript_that_does_not_take_turns_is_refused(stack: Stack) -> None:
    bad = {
        "starts with the assistant": GIVEN[::-1],
        "ends with the user": GIVEN[:1],
        "two users in a row": [GIVEN[0], GIVEN[0], GIVEN[1]],
        "an unknown role": [{"role": "system", "content": "x"}, GIVEN[1]],
    }
    async with stack.client() as client:
        answers = {
            why: await client.post(
                "/api/agent/run", json={"task": "Who am I?", "initial_messages": transcript}
            )
            for why, transcript in bad.items()
        }
    assert {why: answer.status_code for why, answer in answers.items()} == dict.fromkeys(bad, 422)
    assert "begins with a user message" in answers["starts with the assistant"].text
    assert "take turns" in answers["two users in a row"].text
    assert stack.fake.requests == []
