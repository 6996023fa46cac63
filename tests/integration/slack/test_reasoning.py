"""The model's thinking in Slack: `/reasoning` for admins only, and in a thread the thinking
shown as the thread's status while it streams, never in the streamed answer."""

from __future__ import annotations

import asyncio
import math

import pytest

from tests.fakes.llm import Reply
from tests.integration.slack.test_replies import MENTION, answered
from tests.support.slack import SlackStack

THOUGHT = "They ask for the answer.\nIt is forty-two, no tool needed."


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ADMINS": "slack:U0ADA"}], indirect=True)
async def test_an_admin_chooses_and_the_thread_s_status_shows_the_thinking(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    ada = fake.user("U0ADA", "ada")
    status, refused = await fake.command(ann, general, "/reasoning", "stream")
    assert status == 200 and "Only an admin may change it." in refused
    status, done = await fake.command(ada, general, "/reasoning", "stream")
    assert done == "From now on I think before I answer, and show my thinking as it comes here."
    # The answer waits until its thinking was shown (message_start, the thinking block's
    # start, its deltas, its signature and its end come first).
    gate = asyncio.Event()
    after = 4 + math.ceil(len(THOUGHT) / 6)
    slack_stack.fake.enqueue(
        Reply(thinking=THOUGHT, text="42.", chunk_size=6, gate=gate, gate_after=after)
    )
    asked = await fake.say(ann, general, f"{MENTION} the answer?")
    latest = "is thinking: It is forty-two, no tool needed."
    await fake.wait_for(lambda: any(s["status"] == latest for s in fake.statuses))
    gate.set()
    (reply,) = await answered(slack_stack, general, asked.ts)
    assert reply.shown == "42."  # the thinking is not in the streamed answer
    statuses = [s["status"] for s in fake.statuses if s["thread_ts"] == asked.ts]
    assert statuses[-1] == ""
    assert slack_stack.fake.requests[0].body["thinking"]["display"] == "summarized"
