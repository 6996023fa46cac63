"""What a channel's admins choose for everyone in it, end to end in Slack: `/instructions`
(and `!instructions` in a thread) in that channel's system prompts and no other's; `/tools
off` in one channel and not another; `/activation always`, which answers every message of
that channel alone, never another bot's. Real web app, worker, Redis and database; fake
Slack and model."""

from __future__ import annotations

import pytest

from tests.fakes.llm import Reply
from tests.integration.slack.test_replies import MENTION, answered
from tests.integration.slack.test_thread_commands import notes
from tests.support.slack import SlackStack
from tests.support.stack import idle

pytestmark = pytest.mark.e2e
ADMINS = {"PARLEY_ADMINS": "slack:U0ADA"}
PIRATE = "Answer like a pirate."


@pytest.mark.parametrize("slack_stack", [ADMINS], indirect=True)
async def test_a_channels_instruction_and_tools_reach_its_threads_alone(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    ada, random = fake.user("U0ADA", "ada"), fake.channel("C0RANDOM", "random")
    _, refused = await fake.command(ann, general, "/instructions", PIRATE)
    assert refused == "Only an admin may change this chat's instruction."
    _, too_long = await fake.command(ada, general, "/instructions", "x" * 1001)
    assert too_long.startswith("An instruction is at most 1000 characters")
    _, kept = await fake.command(ada, general, "/instructions", PIRATE)
    assert kept.startswith("From now on I follow this in every answer here")
    _, off = await fake.command(ada, general, "/tools", "off current_time")
    assert off == "current_time is switched off in this chat: I will not use it here."
    _, unknown = await fake.command(ada, general, "/tools", "off nope")
    assert unknown.startswith("There is no tool 'nope' here.")

    slack_stack.fake.responder = lambda request: Reply(text="ok")
    here = await fake.say(ann, general, f"{MENTION} hi")
    await answered(slack_stack, general, here.ts)
    there = await fake.say(ann, random, f"{MENTION} hi")
    await answered(slack_stack, random, there.ts)
    in_general, in_random = slack_stack.fake.requests
    assert PIRATE in in_general.system_text() and PIRATE not in in_random.system_text()
    tools = [{t["name"] for t in r.body["tools"]} for r in (in_general, in_random)]
    assert "current_time" not in tools[0] and "current_time" in tools[1]

    await fake.say(ann, general, "!instructions", thread_ts=here.ts)
    await fake.wait_for(lambda: bool(notes(slack_stack, "U0ANN")))
    assert notes(slack_stack, "U0ANN")[-1].startswith(f'The instruction here: "{PIRATE}"')
    await fake.say(ada, general, "!instructions clear", thread_ts=here.ts)
    await fake.wait_for(lambda: bool(notes(slack_stack, "U0ADA")))
    assert notes(slack_stack, "U0ADA") == ["Cleared: no standing instruction here any more."]
    await fake.say(ann, general, "and again", thread_ts=here.ts)
    await answered(slack_stack, general, here.ts, count=2)
    assert PIRATE not in slack_stack.fake.requests[-1].system_text()


@pytest.mark.parametrize("slack_stack", [ADMINS], indirect=True)
async def test_always_answers_every_message_of_its_channel_but_never_a_bots(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    ada, random = fake.user("U0ADA", "ada"), fake.channel("C0RANDOM", "random")
    _, refused = await fake.command(ann, general, "/activation", "always")
    assert refused.endswith("Only an admin may change it.")
    _, chosen = await fake.command(ada, general, "/activation", "always")
    assert chosen == "From now on: I answer every message here."
    slack_stack.fake.responder = lambda request: Reply(text="ok")

    await fake.bot_says(general, "beep, another app speaking")
    await fake.say(ann, random, "unaddressed in random")
    asked = await fake.say(ann, general, "unaddressed in general")
    (reply,) = await answered(slack_stack, general, asked.ts)
    assert reply.shown == "ok"
    await idle(slack_stack.redis_url)
    (only,) = slack_stack.fake.requests
    assert "unaddressed in general" in only.last_user_text()
    assert fake.bot_messages(random.id) == []

    _, back = await fake.command(ada, general, "/activation", "mention")
    assert back == "From now on: I answer here when someone mentions me or replies to me."
    await fake.say(ann, general, "not for the bot any more")
    later = await fake.say(ann, general, f"{MENTION} but this is")
    await answered(slack_stack, general, later.ts)
    assert len(slack_stack.fake.requests) == 2
    assert "not for the bot" not in slack_stack.fake.requests[-1].last_user_text()


@pytest.mark.parametrize("slack_stack", [{"PARLEY_GROUP_CONTEXT": "5"}], indirect=True)
async def test_a_mention_sees_what_the_channel_said_before_it(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    bob = fake.user("U0BOB", "bob")
    await fake.say(bob, general, "the deploy failed at noon")
    await fake.bot_says(general, "CI: build 42 red")
    slack_stack.fake.responder = lambda request: Reply(text="ok")
    asked = await fake.say(ann, general, f"{MENTION} what happened?")
    await answered(slack_stack, general, asked.ts)
    said = slack_stack.fake.requests[0].last_user_text()
    assert '<untrusted-data source="chat">\nslack:U0BOB: the deploy failed at noon\n' in said
    assert "build 42" not in said and said.rstrip().endswith("what happened?")
