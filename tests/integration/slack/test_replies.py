"""Slack replies end to end: fake Slack → web app → Redis → a worker process → fake Slack.

The real slack-bolt app and slack_sdk client talk HTTP to the fake, which is as strict as
Slack (signatures, 12,000-character markdown, streaming states, rate tiers with 429s).
"""

from __future__ import annotations

import asyncio

import pytest

from tests.fakes.llm import RecordedRequest, Reply
from tests.fakes.slack import BOT_USER_ID, FakeSlack, Posted, SlackChannel
from tests.fakes.slack.events import event_callback
from tests.support.slack import SlackStack
from tests.support.stack import idle

MENTION = f"<@{BOT_USER_ID}>"


async def answered(
    stack: SlackStack, channel: SlackChannel, thread_ts: str | None = None, count: int = 1
) -> list[Posted]:
    """The bot's messages in the channel (or thread), once there are `count` of them and the
    worker has finished the turn."""
    fake = stack.fake_slack

    def ready() -> bool:
        return len(fake.bot_messages(channel.id, thread_ts)) >= count

    await fake.wait_for(ready)
    await idle(stack.redis_url)
    return fake.bot_messages(channel.id, thread_ts)


async def test_a_mention_starts_a_thread_and_the_reply_streams_into_it(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    text = "Here is **the answer**: " + " ".join(f"word{i}" for i in range(200))
    slack_stack.fake.enqueue(Reply(text=text, chunk_size=12, delay=0.01))
    asked = await fake.say(ann, general, f"{MENTION} what is the answer?")
    (reply,) = await answered(slack_stack, general, asked.ts)
    assert reply.shown == text
    assert reply.streaming == "stopped"
    assert fake.count("chat.startStream") == 1 and fake.count("chat.appendStream") >= 1
    assert fake.bot_messages(general.id) == []  # nothing at the top of the channel
    assert any(s["thread_ts"] == asked.ts and s["status"] for s in fake.statuses)
    # The mention arrived twice (message and app_mention events) and was answered once.
    assert len(slack_stack.fake.requests) == 1
    assert slack_stack.fake.requests[0].last_user_text().endswith("what is the answer?")


async def test_the_reply_shows_while_slack_is_slow_to_set_the_thread_status(
    slack_stack: SlackStack,
) -> None:
    """The thread's "is thinking…" is cosmetic: neither the model call nor the first words
    wait for Slack to answer it, and the status still ends cleared, after it was set."""
    fake, ann, general = await slack_stack.begin()
    slow_status = fake.hold("assistant.threads.setStatus")
    slack_stack.fake.enqueue(Reply(text="Paris, since 508."))
    asked = await fake.say(ann, general, f"{MENTION} capital of France?")
    try:
        await fake.wait_for(lambda: any(m.shown for m in fake.bot_messages(general.id, asked.ts)))
        assert fake.statuses == []  # not one status call was answered yet
    finally:
        slow_status.set()
    (reply,) = await answered(slack_stack, general, asked.ts)
    assert reply.shown == "Paris, since 508."
    statuses = [s["status"] for s in fake.statuses if s["thread_ts"] == asked.ts]
    assert statuses[0] == "is thinking…" and statuses[-1] == ""


async def test_a_reply_in_the_thread_continues_the_session_without_a_mention(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    slack_stack.fake.enqueue(Reply(text="Paris."), Reply(text="About 2.1 million."))
    asked = await fake.say(ann, general, f"{MENTION} capital of France?")
    await answered(slack_stack, general, asked.ts)
    await fake.say(ann, general, "and its population?", thread_ts=asked.ts)
    replies = await answered(slack_stack, general, asked.ts, count=2)
    assert [r.shown for r in replies] == ["Paris.", "About 2.1 million."]
    history = str(slack_stack.fake.requests[-1].body["messages"])
    assert "capital of France?" in history and "Paris." in history
    # Without a mention, a message outside the bot's threads is not for the bot.
    await fake.say(ann, general, "lunch anyone?")
    await fake.say(ann, general, "me!", thread_ts=(await fake.say(ann, general, "hi")).ts)
    await asyncio.sleep(0.5)
    assert len(slack_stack.fake.requests) == 2
    status, usage = await fake.command(ann, general, "/usage")
    assert status == 200 and "This conversation so far:" in usage, usage
    tokens_in = int(usage.split(" tokens in")[0].rsplit(" ", 1)[-1].replace(",", ""))
    assert tokens_in > 0 and "claude-test" in usage


async def test_a_direct_message_is_answered_in_the_dm_by_posting_and_editing(
    slack_stack: SlackStack,
) -> None:
    fake, ann, _ = await slack_stack.begin()
    dm = fake.dm(ann)
    text = "A *streamed* answer: " + " ".join(f"w{i}" for i in range(300))
    slack_stack.fake.enqueue(Reply(text=text, chunk_size=10, delay=0.01))
    await fake.say(ann, dm, "hello")
    (reply,) = await answered(slack_stack, dm)
    assert reply.shown == text
    assert reply.thread_ts is None
    assert fake.count("chat.postMessage") == 1 and fake.count("chat.update") >= 1
    assert fake.count("chat.startStream") == 0  # streams only go into threads


async def test_an_assistant_thread_gets_suggested_prompts_and_a_streamed_reply(
    slack_stack: SlackStack,
) -> None:
    fake, ann, _ = await slack_stack.begin()
    dm = fake.dm(ann)
    thread = await fake.start_assistant_thread(ann)
    await fake.wait_for(lambda: bool(fake.suggested))
    assert fake.suggested[0]["thread_ts"] == thread and len(fake.suggested[0]["prompts"]) >= 2
    slack_stack.fake.enqueue(Reply(text="Sure, here goes."))
    await fake.say(ann, dm, "What can you do?", thread_ts=thread)
    (reply,) = await answered(slack_stack, dm, thread)
    assert reply.shown == "Sure, here goes."
    assert reply.streaming == "stopped"
    assert fake.bot_messages(dm.id) == []


async def test_a_reply_longer_than_12000_characters_continues_without_breaking_code(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    paragraphs = [f"Paragraph {i}:" + " lorem ipsum dolor sit amet" * 12 for i in range(70)]
    code = "```python\n" + "\n".join(f"value_{i} = {i} * {i}" for i in range(120)) + "\n```"
    text = "\n\n".join([*paragraphs[:30], code, *paragraphs[30:]])
    assert len(text) > 25_000
    slack_stack.fake.enqueue(Reply(text=text, chunk_size=400))
    asked = await fake.say(ann, general, f"{MENTION} write a lot")
    replies = await answered(slack_stack, general, asked.ts, count=3)
    shown = [r.shown for r in replies]
    assert all(0 < len(s) <= 12_000 for s in shown)
    assert "".join(shown).replace("\n", "") == text.replace("\n", "")
    assert sum(code in s for s in shown) == 1  # the code block fits one message: never cut
    assert fake.rate_limited == 0


async def test_twenty_concurrent_replies_in_one_workspace_all_land_without_429s(
    slack_stack: SlackStack,
) -> None:
    for _ in range(2):
        await slack_stack.start_worker()
    fake = slack_stack.fake_slack
    general = fake.channel("C0GENERAL", "general")
    people = [fake.user(f"U0P{i:02}", f"p{i}") for i in range(20)]
    texts = {f"U0P{i:02}": f"Answer for p{i}:" + " some words" * 60 for i in range(20)}

    def answer(request: RecordedRequest) -> Reply:
        return Reply(text=texts[_asker(request.last_user_text())], chunk_size=20, delay=0.02)

    slack_stack.fake.enqueue(*[answer] * len(people))
    asked = await asyncio.gather(*(fake.say(p, general, f"{MENTION} I am {p.id}") for p in people))
    for person, message in zip(people, asked, strict=True):
        (reply,) = await answered(slack_stack, general, message.ts)
        assert reply.shown == texts[person.id]
    assert fake.rate_limited == 0 and fake.violations == 0


def _asker(text: str) -> str:
    return text.rsplit("I am ", 1)[1].strip()


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ALLOWED_USERS": "slack:U0ANN"}], indirect=True)
async def test_a_stranger_gets_an_ephemeral_refusal_and_costs_no_model_call(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    bob = fake.user("U0BOB", "bob")
    asked = await fake.say(bob, general, f"{MENTION} hi")
    await fake.wait_for(lambda: bool(fake.ephemerals))
    (note,) = fake.ephemerals
    assert note["user"] == "U0BOB" and "slack:U0BOB" in note["text"]
    # A refused mention does not make the thread one the bot answers without a mention.
    await fake.say(ann, general, "what did he want?", thread_ts=asked.ts)
    await asyncio.sleep(0.5)
    assert slack_stack.fake.requests == []
    assert fake.bot_messages(general.id) == []
    status, usage = await fake.command(bob, general, "/usage")
    assert status == 200 and "slack:U0BOB" in usage and "tokens" not in usage


async def test_streaming_unavailable_falls_back_to_posting_and_editing(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    fake.streaming_enabled = False
    text = "Edited in place: " + " ".join(f"w{i}" for i in range(200))
    slack_stack.fake.enqueue(Reply(text=text, chunk_size=10, delay=0.01))
    asked = await fake.say(ann, general, f"{MENTION} go")
    (reply,) = await answered(slack_stack, general, asked.ts)
    assert reply.shown == text and reply.streaming == "none"


async def test_a_stream_that_expires_mid_reply_loses_no_text(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    fake.stream_ttl = 0.6
    gate = asyncio.Event()
    text = ("First part of the answer. " * 10 + "And the rest, after a long pause. " * 10).strip()
    slack_stack.fake.enqueue(Reply(text=text, chunk_size=20, gate=gate, gate_after=13))
    asked = await fake.say(ann, general, f"{MENTION} think hard")
    await fake.wait_for(lambda: fake.count("chat.startStream") == 1)
    await asyncio.sleep(1.5)  # the model pauses longer than the stream lives
    gate.set()
    replies = await answered(slack_stack, general, asked.ts)
    await idle(slack_stack.redis_url)
    shown = "".join(r.shown for r in fake.bot_messages(general.id, asked.ts))
    assert shown.replace("\n", "") == text.replace("\n", "")
    assert replies[0].streaming == "expired"


async def test_bad_signatures_and_stale_requests_are_refused_and_nothing_is_queued(
    slack_stack: SlackStack, fake_slack: FakeSlack
) -> None:
    await slack_stack.start_worker()
    ann = fake_slack.user("U0ANN", "ann")
    dm = fake_slack.dm(ann)
    event = {
        "type": "message",
        "channel": dm.id,
        "channel_type": "im",
        "user": ann.id,
        "text": "forged",
        "ts": "1700000000.999999",
    }
    forged = await fake_slack.deliver(event_callback(event), secret="not-the-secret")
    stale = await fake_slack.deliver(event_callback(event), timestamp=1_600_000_000)
    assert forged[0] == 401 and stale[0] == 401
    status, body = await fake_slack.verify_url()
    assert status == 200 and "challenge" in str(body)
    await asyncio.sleep(0.5)
    assert slack_stack.fake.requests == []
    assert fake_slack.bot_messages(dm.id) == []


async def test_text_that_looks_like_html_reaches_slack_as_the_model_wrote_it(
    slack_stack: SlackStack,
) -> None:
    """Slack renders `markdown_text` itself: Parley passes it on unchanged, `<` and `&` too."""
    fake, ann, general = await slack_stack.begin()
    text = "1. first\n2. second item with <angle> & ampersand, <b>not bold</b> &amp; <!-- c -->"
    slack_stack.fake.enqueue(Reply(text=text, chunk_size=7, delay=0.01))
    asked = await fake.say(ann, general, f"{MENTION} list something")
    (reply,) = await answered(slack_stack, general, asked.ts)
    assert reply.shown == text
