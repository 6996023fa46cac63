"""Slack under stress: retried and duplicated events, a worker killed mid-reply, other bots,
and Socket Mode with an envelope left unacknowledged."""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes.llm import Reply, ToolCallSpec
from tests.fakes.slack import BOT_TOKEN
from tests.integration.slack.test_replies import MENTION, answered
from tests.support.slack import SlackStack


async def test_retried_and_duplicated_events_are_answered_once(slack_stack: SlackStack) -> None:
    fake, ann, _ = await slack_stack.begin()
    dm = fake.dm(ann)
    slack_stack.fake.enqueue(Reply(text="Once."), Reply(text="Twice?!"))
    await fake.say(ann, dm, "hello")
    await fake.redeliver_last()  # Slack's retry: X-Slack-Retry-Num 1
    await fake.deliver(fake.deliveries[-1].body)  # the same event again, as a new delivery
    (reply,) = await answered(slack_stack, dm)
    await asyncio.sleep(0.5)
    assert reply.shown == "Once."
    assert len(slack_stack.fake.requests) == 1
    assert all(d.status == 200 and d.elapsed < 3 for d in fake.deliveries)


async def test_messages_from_bots_are_ignored(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    slack_stack.fake.enqueue(Reply(text="Hi Ann."))
    asked = await fake.say(ann, general, f"{MENTION} hi")
    await answered(slack_stack, general, asked.ts)
    await fake.bot_says(general, f"{MENTION} hello fellow bot", thread_ts=asked.ts)
    await asyncio.sleep(0.5)
    # Our own streamed reply came back as a message event too, and was not answered either.
    assert any(d.body.get("event", {}).get("bot_id") for d in fake.deliveries)
    assert len(slack_stack.fake.requests) == 1


async def test_a_reply_resumed_after_a_crash_edits_the_same_message(
    slack_stack: SlackStack,
) -> None:
    first = await slack_stack.start_worker_process()
    fake = slack_stack.fake_slack
    ann = fake.user("U0ANN", "ann")
    general = fake.channel("C0GENERAL", "general")
    gate = asyncio.Event()
    slack_stack.fake.enqueue(
        Reply(text="This first attempt is cut off " * 4, chunk_size=6, gate=gate, gate_after=12),
        Reply(text="The complete answer, once."),
    )
    asked = await fake.say(ann, general, f"{MENTION} tell me")
    await fake.wait_for(lambda: bool(fake.bot_messages(general.id, asked.ts)))
    await asyncio.sleep(0.3)  # past the moment the worker stored the message's ts
    slack_stack.kill(first)
    await slack_stack.start_worker_process()
    replies = await answered(slack_stack, general, asked.ts)
    gate.set()
    assert [r.shown for r in replies] == ["The complete answer, once."]
    assert fake.count("chat.update") >= 1
    logs = "".join(p.read_text() for p in slack_stack.tmp.glob("worker-*.log"))
    assert BOT_TOKEN not in logs


async def test_a_running_tool_shows_as_the_thread_status(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    slack_stack.fake.enqueue(
        Reply(
            text="Let me wait.",
            tool_calls=[ToolCallSpec("slow_write", {"path": "/dev/null", "seconds": 1})],
        ),
        Reply(text="Done waiting."),
    )
    asked = await fake.say(ann, general, f"{MENTION} wait a bit")
    (reply,) = await answered(slack_stack, general, asked.ts)
    assert reply.shown == "Let me wait.\n\nDone waiting."
    statuses = [s["status"] for s in fake.statuses if s["thread_ts"] == asked.ts]
    assert "is thinking…" in statuses and "is running slow_write…" in statuses


@pytest.mark.parametrize("slack_stack", [{"socket": "1"}], indirect=True)
async def test_socket_mode_answers_and_an_unacknowledged_envelope_is_redelivered_once(
    slack_stack: SlackStack,
) -> None:
    fake, ann, _ = await slack_stack.begin()
    dm = fake.dm(ann)
    slack_stack.fake.enqueue(Reply(text="Over the socket."))
    await fake.say(ann, dm, "hello")
    await fake.redeliver_last()
    (reply,) = await answered(slack_stack, dm)
    await asyncio.sleep(0.5)
    assert reply.shown == "Over the socket."
    assert len(slack_stack.fake.requests) == 1
    assert fake.count("apps.connections.open") >= 1


async def test_a_429_mid_stream_is_waited_out_for_every_worker_and_no_text_is_lost(
    slack_stack: SlackStack,
) -> None:
    await slack_stack.start_worker()
    fake, ann, general = await slack_stack.begin()
    text = " ".join(f"w{i}" for i in range(400))
    slack_stack.fake.enqueue(Reply(text=text, chunk_size=10, delay=0.01))
    asked = await fake.say(ann, general, f"{MENTION} go")
    await fake.wait_for(lambda: fake.count("chat.appendStream") >= 1)
    fake.fail_next("chat.appendStream", "ratelimited", status=429, retry_after=2)
    fake.fail_next("chat.stopStream", "ratelimited", status=429, retry_after=1)
    (reply,) = await answered(slack_stack, general, asked.ts)
    assert reply.shown == text and reply.streaming == "stopped"
    assert fake.rate_limited >= 2
    assert fake.violations == 0  # nothing was called during a Retry-After
