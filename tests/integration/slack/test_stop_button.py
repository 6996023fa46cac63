"""The Stop button under a long Slack reply, end to end: it shows while the reply runs,
stops that reply's turn alone with the text so far kept, goes when the reply ends, and a
press that comes too late, or from another thread, changes nothing."""

from __future__ import annotations

import asyncio

import pytest

from adapters.slack.stop_button import ACTION
from tests.fakes.llm import RecordedRequest, Reply
from tests.fakes.slack import FakeSlack, Posted, SlackChannel
from tests.integration.slack.test_replies import MENTION, answered
from tests.support.slack import SlackStack

LONG = "word " * 60


def stop_button(fake: FakeSlack, channel: SlackChannel, thread_ts: str) -> Posted | None:
    """The thread's message with a Stop button, while one shows."""
    for message in fake.bot_messages(channel.id, thread_ts):
        for block in message.blocks or []:
            if any(e.get("action_id") == ACTION for e in block.get("elements") or []):
                return message
    return None


async def shown(fake: FakeSlack, channel: SlackChannel, thread_ts: str) -> Posted:
    await fake.wait_for(lambda: stop_button(fake, channel, thread_ts) is not None, what="Stop")
    found = stop_button(fake, channel, thread_ts)
    assert found is not None
    return found


def notes(fake: FakeSlack, user: str) -> list[str]:
    return [note["text"] for note in fake.ephemerals if note["user"] == user]


async def test_stop_pressed_mid_stream_stops_that_thread_alone_and_keeps_the_text(
    slack_stack: SlackStack,
) -> None:
    """With the defaults: two threads answering at once, each with a Stop button after a few
    seconds; one thread's button pressed in the other thread stops nothing; pressed where it
    is, its turn ends with the text so far and the button goes, and the other reply lands
    whole."""
    fake, ann, general = await slack_stack.begin()
    gates = {"first": asyncio.Event(), "second": asyncio.Event()}

    def reply(request: RecordedRequest) -> Reply:
        which = "first" if "first" in request.last_user_text() else "second"
        return Reply(text=f"{which}: {LONG}", chunk_size=5, gate=gates[which], gate_after=8)

    slack_stack.fake.responder = reply
    first = await fake.say(ann, general, f"{MENTION} first")
    second = await fake.say(ann, general, f"{MENTION} second")
    button = await shown(fake, general, first.ts)
    other = await shown(fake, general, second.ts)
    assert button.thread_ts == first.ts

    value = str(button.blocks[0]["elements"][0]["value"])  # type: ignore[index]
    await fake.press(ann, other, ACTION, value, check=False)  # the first's, in the second thread
    await fake.wait_for(lambda: bool(notes(fake, "U0ANN")))
    assert notes(fake, "U0ANN") == ["That Stop button is not for this conversation."]

    await fake.press(ann, button, ACTION)
    await fake.wait_for(lambda: stop_button(fake, general, first.ts) is None, what="button gone")
    gates["second"].set()
    (stopped,) = await answered(slack_stack, general, first.ts)
    gates["first"].set()
    assert stopped.shown.startswith("first: word") and stopped.shown.endswith("⏹ Stopped.")
    (whole,) = await answered(slack_stack, general, second.ts)
    assert whole.shown == f"second: {LONG}".strip()
    assert stop_button(fake, general, second.ts) is None  # gone once it finished
    assert len(notes(fake, "U0ANN")) == 1  # the press that stopped needed no word


async def test_a_press_after_its_reply_ended_stops_nothing_not_even_the_next_turn(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    gates = [asyncio.Event(), asyncio.Event()]
    slack_stack.fake.enqueue(
        Reply(text=f"one {LONG}", chunk_size=5, gate=gates[0], gate_after=4),
        Reply(text=f"two {LONG}", chunk_size=5, gate=gates[1], gate_after=4),
    )
    asked = await fake.say(ann, general, f"{MENTION} go")
    old = await shown(fake, general, asked.ts)
    gates[0].set()
    await answered(slack_stack, general, asked.ts)
    assert stop_button(fake, general, asked.ts) is None
    await fake.say(ann, general, "and again", thread_ts=asked.ts)
    await shown(fake, general, asked.ts)  # the second turn runs, with a button of its own
    await fake.press(ann, old, ACTION, check=False)  # a client still showing the old one
    await fake.wait_for(lambda: bool(notes(fake, "U0ANN")))
    assert notes(fake, "U0ANN") == ["That reply has already finished."]
    gates[1].set()
    replies = await answered(slack_stack, general, asked.ts, count=2)
    assert [r.shown for r in replies] == [f"one {LONG}".strip(), f"two {LONG}".strip()]


@pytest.mark.parametrize("slack_stack", [{"PARLEY_SLACK_STOP_AFTER": "0"}], indirect=True)
async def test_in_a_channel_only_the_person_answered_or_an_admin_may_stop(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    bob = fake.user("U0BOB", "bob")
    gate = asyncio.Event()
    slack_stack.fake.enqueue(Reply(text=LONG, chunk_size=5, gate=gate, gate_after=4))
    asked = await fake.say(ann, general, f"{MENTION} go")
    button = await shown(fake, general, asked.ts)
    await fake.press(bob, button, ACTION)
    await fake.wait_for(lambda: bool(notes(fake, "U0BOB")))
    assert notes(fake, "U0BOB") == ["Only the person it answers, or an admin, can stop this reply."]
    assert stop_button(fake, general, asked.ts) is not None
    gate.set()
    (reply,) = await answered(slack_stack, general, asked.ts)
    assert reply.shown == LONG.strip()
