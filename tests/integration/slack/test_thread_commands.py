"""Commands for one conversation in Slack, end to end: `!stop`, `!new`, `!compact` and `!model`
said in a thread (where slash commands do not work), each for that thread alone; `/new`,
`/compact`, `/stop` and `/model` in a DM; and in a channel, how to say them in a thread."""

from __future__ import annotations

import asyncio

import pytest

from adapters.slack.thread_commands import COMPACTING
from bot.session.commands import SHORT
from tests.agent.test_context import is_summary_request
from tests.fakes.llm import Reply
from tests.integration.slack.test_replies import MENTION, answered
from tests.support.slack import SlackStack
from tests.support.stack import idle

NOTES = "Notes: a number to keep in mind, seven."


def notes(stack: SlackStack, user: str) -> list[str]:
    return [note["text"] for note in stack.fake_slack.ephemerals if note["user"] == user]


async def test_stop_said_in_a_thread_stops_that_thread_s_turn_alone(
    slack_stack: SlackStack,
) -> None:
    """With the defaults: two threads answering at once; `!stop` in one ends its turn with
    what was written so far, and the other thread's answer lands whole."""
    fake, ann, general = await slack_stack.begin()
    gate = asyncio.Event()
    long = "word " * 60
    slack_stack.fake.responder = lambda request: Reply(
        text=long if "first" in request.last_user_text() else "the other, whole",
        chunk_size=5, gate=gate if "first" in request.last_user_text() else None, gate_after=8,
    )  # fmt: skip
    first = await fake.say(ann, general, f"{MENTION} first")
    await fake.wait_for(lambda: len(slack_stack.fake.requests) == 1)
    second = await fake.say(ann, general, f"{MENTION} second")

    def whole() -> bool:  # while the first thread's turn still runs
        return [m.shown for m in fake.bot_messages(general.id, second.ts)] == ["the other, whole"]

    await fake.wait_for(whole)
    await fake.say(ann, general, "!stop", thread_ts=first.ts)
    (stopped,) = await answered(slack_stack, general, first.ts)
    gate.set()
    assert stopped.shown.endswith("⏹ Stopped.")
    assert len(slack_stack.fake.requests) == 2  # `!stop` reached no model


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ADMINS": "slack:U0ADA"}], indirect=True)
async def test_new_and_model_said_in_a_thread(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    ada = fake.user("U0ADA", "ada")
    slack_stack.fake.responder = lambda request: Reply(text=f"ok {len(request.body['messages'])}")
    asked = await fake.say(ann, general, f"{MENTION} remember the number 7")
    await answered(slack_stack, general, asked.ts)
    await fake.say(ann, general, "!model claude-other", thread_ts=asked.ts)
    await fake.wait_for(lambda: bool(notes(slack_stack, "U0ANN")))
    assert notes(slack_stack, "U0ANN") == [
        "This chat uses claude-test. Only an admin can switch models."
    ]
    await fake.say(ada, general, "!model claude-other", thread_ts=asked.ts)
    await fake.wait_for(lambda: bool(notes(slack_stack, "U0ADA")))
    assert notes(slack_stack, "U0ADA") == ["Switched this chat to claude-other."]
    await fake.say(ann, general, "!new", thread_ts=asked.ts)
    await fake.say(ann, general, "what was the number?", thread_ts=asked.ts)
    await answered(slack_stack, general, asked.ts, count=2)
    await idle(slack_stack.redis_url)
    first, last = slack_stack.fake.requests
    assert "remember the number 7" not in str(last.body["messages"])  # started over
    assert (first.body["model"], last.body["model"]) == ("claude-test", "claude-other")


async def test_slash_commands_for_a_dm_and_the_way_to_say_them_in_a_channel(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    status, hint = await fake.command(ann, general, "/stop")
    assert status == 200 and hint.startswith("In a channel every thread is a conversation")
    assert "!stop" in hint
    dm = fake.dm(ann)
    status, idle_stop = await fake.command(ann, dm, "/stop")
    assert idle_stop == "Nothing is running right now."
    status, model = await fake.command(ann, dm, "/model")
    assert model == "This chat uses claude-test."
    status, new = await fake.command(ann, dm, "/new")
    assert new == "Starting over: I forget this conversation from here on."
    assert slack_stack.fake.requests == []


@pytest.mark.parametrize(
    "slack_stack",
    [{"PARLEY_ADMINS": "slack:U0ADA", "PARLEY_COMPACT_KEEP_TURNS": "1"}],
    indirect=True,
)
async def test_compact_said_in_a_thread_is_written_by_the_thread_s_model(
    slack_stack: SlackStack,
) -> None:
    """`!compact` in a thread: queued after the messages before it, answered in the thread,
    the summary written by the model an admin chose there (`!model`), and read by the next
    turn instead of the turns it folds."""
    fake, ann, general = await slack_stack.begin()
    ada = fake.user("U0ADA", "ada")
    slack_stack.fake.responder = lambda request: (
        Reply(text=NOTES) if is_summary_request(request) else Reply(text="noted")
    )
    asked = await fake.say(ann, general, f"{MENTION} remember the number 7")
    await answered(slack_stack, general, asked.ts)
    await fake.say(ada, general, "!model claude-other", thread_ts=asked.ts)
    await fake.say(ann, general, "and the colour blue", thread_ts=asked.ts)
    await fake.say(ann, general, "!compact", thread_ts=asked.ts)
    shown = await answered(slack_stack, general, asked.ts, count=3)
    assert shown[-1].shown.startswith("Compacted the conversation: about ")
    assert shown[-1].shown.endswith(" tokens (2 earlier messages summarised).")
    assert COMPACTING in notes(slack_stack, "U0ANN")
    (summary,) = [r for r in slack_stack.fake.requests if is_summary_request(r)]
    assert summary.body["model"] == "claude-other"
    assert "remember the number 7" in str(summary.body)
    await fake.say(ann, general, "what was the number?", thread_ts=asked.ts)
    await answered(slack_stack, general, asked.ts, count=4)
    last = str(slack_stack.fake.requests[-1].body["messages"])
    assert NOTES in last and "remember the number 7" not in last and "colour blue" in last


async def test_compact_in_a_dm_with_nothing_to_fold_says_so(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    dm = fake.dm(ann)
    status, said = await fake.command(ann, dm, "/compact")
    assert (status, said) == (200, COMPACTING)
    (answer,) = await answered(slack_stack, dm)
    assert answer.shown == SHORT
    status, hint = await fake.command(ann, general, "/compact")
    assert "say !compact in the thread" in hint
    assert slack_stack.fake.requests == []
