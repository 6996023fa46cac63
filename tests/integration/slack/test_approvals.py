"""Approval buttons in Slack: approve, deny, always allow, the wrong person, expiry."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes.llm import Reply, ToolCallSpec
from tests.fakes.slack import FakeSlack, Posted, SlackChannel, SlackUser
from tests.integration.slack.test_replies import MENTION, answered
from tests.support.slack import SlackStack, block_text

LAUNCH = ToolCallSpec("launch", {"target": "rocket ✨"})


async def prompt_in(
    stack: SlackStack, channel: SlackChannel, user: SlackUser
) -> tuple[str, Posted]:
    """Ask for something that needs approval; the thread and the prompt with its buttons."""
    fake = stack.fake_slack
    stack.fake.enqueue(Reply(text="Let me launch it.", tool_calls=[LAUNCH]))
    asked = await fake.say(user, channel, f"{MENTION} launch the rocket")
    await fake.wait_for(lambda: any(m.blocks for m in fake.bot_messages(channel.id, asked.ts)))
    (prompt,) = [m for m in fake.bot_messages(channel.id, asked.ts) if m.blocks]
    return asked.ts, prompt


def buttons(message: Posted) -> dict[str, dict[str, str]]:
    return {
        element["action_id"]: element
        for block in message.blocks or []
        if block["type"] == "actions"
        for element in block["elements"]
    }


async def settled(fake: FakeSlack, channel: SlackChannel, thread: str, ts: str) -> Posted:
    """The prompt, once its buttons are gone (the web process updates it after the press)."""

    def current() -> Posted:
        return next(m for m in fake.bot_messages(channel.id, thread) if m.ts == ts)

    await fake.wait_for(lambda: not buttons(current()))
    return current()


async def test_the_prompt_shows_the_exact_arguments_and_approve_runs_the_tool(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    thread, prompt = await prompt_in(slack_stack, general, ann)
    assert '"target": "rocket ✨"' in block_text(prompt) and "launch" in block_text(prompt)
    choices = buttons(prompt)
    assert set(choices) == {"parley_approve", "parley_deny", "parley_remember"}
    assert all("rocket" not in b["value"] for b in choices.values())
    slack_stack.fake.enqueue(Reply(text="Launched!"))
    await fake.press(ann, prompt, "parley_approve")
    replies = await answered(slack_stack, general, thread, count=3)
    assert replies[0].shown == "Let me launch it." and replies[-1].shown == "Launched!"
    shown = await settled(fake, general, thread, prompt.ts)
    assert "✅ Approved by <@U0ANN>" in block_text(shown)
    assert slack_stack.fake.requests[-1].tool_results()[0][1] == "launched rocket ✨"


async def test_deny_tells_the_model_and_the_prompt_says_so(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    thread, prompt = await prompt_in(slack_stack, general, ann)
    slack_stack.fake.enqueue(Reply(text="Okay, I will not."))
    await fake.press(ann, prompt, "parley_deny")
    replies = await answered(slack_stack, general, thread, count=3)
    assert replies[-1].shown == "Okay, I will not."
    assert "❌ Denied by <@U0ANN>" in block_text(await settled(fake, general, thread, prompt.ts))
    assert "Denied" in slack_stack.fake.requests[-1].tool_results()[0][1]


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ADMINS": "slack:U0ADA"}], indirect=True)
async def test_only_the_requester_or_an_admin_may_decide(slack_stack: SlackStack) -> None:
    await slack_stack.start_worker()
    fake = slack_stack.fake_slack
    ann, bob, ada = fake.user("U0ANN", "ann"), fake.user("U0BOB", "bob"), fake.user("U0ADA", "ada")
    general = fake.channel("C0GENERAL", "general")
    thread, prompt = await prompt_in(slack_stack, general, ann)
    await fake.press(bob, prompt, "parley_approve")
    await fake.wait_for(lambda: bool(fake.ephemerals))
    assert fake.ephemerals[0]["user"] == "U0BOB"
    assert "Only the person who asked" in fake.ephemerals[0]["text"]
    await asyncio.sleep(0.3)
    assert len(slack_stack.fake.requests) == 1  # nothing ran
    assert buttons(fake.bot_messages(general.id, thread)[-1])  # still waiting
    slack_stack.fake.enqueue(Reply(text="Launched by the admin."))
    await fake.press(ada, prompt, "parley_approve")
    replies = await answered(slack_stack, general, thread, count=3)
    assert replies[-1].shown == "Launched by the admin."
    assert "Approved by <@U0ADA>" in block_text(await settled(fake, general, thread, prompt.ts))


async def test_always_allow_in_this_conversation_stops_asking(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    thread, prompt = await prompt_in(slack_stack, general, ann)
    slack_stack.fake.enqueue(Reply(text="Launched once."))
    await fake.press(ann, prompt, "parley_remember")
    await answered(slack_stack, general, thread, count=3)
    assert "allowed in this conversation" in block_text(
        await settled(fake, general, thread, prompt.ts)
    )
    slack_stack.fake.enqueue(
        Reply(text="Again.", tool_calls=[LAUNCH]), Reply(text="Launched twice.")
    )
    await fake.say(ann, general, "again please", thread_ts=thread)
    replies = await answered(slack_stack, general, thread, count=4)
    assert replies[-1].shown == "Again.\n\nLaunched twice."
    assert sum(bool(m.blocks and buttons(m)) for m in replies) == 0


@pytest.mark.parametrize("slack_stack", [{"PARLEY_CONFIRMATION_TTL": "5"}], indirect=True)
async def test_an_expired_request_says_so_and_a_late_press_changes_nothing(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    thread, prompt = await prompt_in(slack_stack, general, ann)
    slack_stack.fake.enqueue(Reply(text="It was not approved in time."))
    value = buttons(prompt)["parley_approve"]["value"]
    expired = await settled(fake, general, thread, prompt.ts)
    assert "⌛ Expired" in block_text(expired)
    await fake.press(ann, prompt, "parley_approve", value=value, check=False)
    await fake.wait_for(lambda: bool(fake.ephemerals))
    assert "expired" in fake.ephemerals[-1]["text"]
    replies = await answered(slack_stack, general, thread, count=3)
    assert replies[-1].shown == "It was not approved in time."
    assert "launched" not in str(slack_stack.fake.requests[-1].tool_results())
