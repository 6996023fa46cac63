"""`/steer` in Slack, end to end through the fake Slack and a real worker: a slash command
about the channel, changed there by an admin only, and `!steer` said in a thread reading and
changing the same choice, for every thread of the channel."""

from __future__ import annotations

import pytest

from tests.fakes.llm import Reply
from tests.integration.slack.test_replies import MENTION, answered
from tests.integration.slack.test_thread_commands import notes
from tests.support.slack import SlackStack

WAITS = "a message you send while I work waits until I have answered"
JOINS = "Here a message you send while I work joins what I am doing at the next step."


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ADMINS": "slack:U0ADA"}], indirect=True)
async def test_steer_is_the_channels_and_an_admin_changes_it(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    ada = fake.user("U0ADA", "ada")
    status, refused = await fake.command(ann, general, "/steer", "queue")
    assert status == 200 and refused == f"{JOINS} Only an admin may change it."
    status, changed = await fake.command(ada, general, "/steer", "queue")
    assert changed == f"From now on {WAITS}."
    slack_stack.fake.enqueue(Reply(text="hello"))
    asked = await fake.say(ann, general, f"{MENTION} hi")
    await answered(slack_stack, general, asked.ts)
    await fake.say(ann, general, "!steer interrupt", thread_ts=asked.ts)
    await fake.wait_for(lambda: bool(notes(slack_stack, "U0ANN")))
    assert notes(slack_stack, "U0ANN") == [f"Here {WAITS}. Only an admin may change it."]
    await fake.say(ada, general, "!steer wildly", thread_ts=asked.ts)
    await fake.wait_for(lambda: bool(notes(slack_stack, "U0ADA")))
    assert notes(slack_stack, "U0ADA") == [
        "There is no steer mode 'wildly': say steer, queue or interrupt."
    ]
    assert len(slack_stack.fake.requests) == 1  # the commands reached no model


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ADMINS": "slack:U0ADA"}], indirect=True)
async def test_checkin_said_in_a_thread_is_made_there_by_an_admin(
    slack_stack: SlackStack,
) -> None:
    """`!checkin …` in a channel's thread: a quiet task answering in that thread, made by an
    admin only; `!checkin` lists it and `!checkin off N` cancels it."""
    fake, ann, general = await slack_stack.begin()
    ada = fake.user("U0ADA", "ada")
    slack_stack.fake.enqueue(Reply(text="hello"))
    asked = await fake.say(ann, general, f"{MENTION} hi")
    await answered(slack_stack, general, asked.ts)
    await fake.say(ann, general, "!checkin every 2h look at the build", thread_ts=asked.ts)
    await fake.wait_for(lambda: bool(notes(slack_stack, "U0ANN")))
    assert notes(slack_stack, "U0ANN") == ["In a group only an admin may make a check-in."]
    await fake.say(ada, general, "!checkin every 2h look at the build", thread_ts=asked.ts)
    await fake.wait_for(lambda: bool(notes(slack_stack, "U0ADA")))
    (made,) = notes(slack_stack, "U0ADA")
    assert made.startswith("Check-in #") and "every 2 hours" in made
    task_id = made.split("#", 1)[1].split(" ", 1)[0].rstrip(":")
    await fake.say(ada, general, "!checkin", thread_ts=asked.ts)
    await fake.wait_for(lambda: len(notes(slack_stack, "U0ADA")) == 2)
    assert f"#{task_id}" in notes(slack_stack, "U0ADA")[1]
    await fake.say(ada, general, f"!checkin off {task_id}", thread_ts=asked.ts)
    await fake.wait_for(lambda: len(notes(slack_stack, "U0ADA")) == 3)
    assert notes(slack_stack, "U0ADA")[2] == f"Cancelled check-in #{task_id}."
    assert len(slack_stack.fake.requests) == 1  # the commands reached no model
