"""Per-person limits end to end: Telegram and Slack through their fakes, and the HTTP API,
with a real Redis, web app and worker; a message over a limit never reaches the model."""

from __future__ import annotations

import re
from functools import partial

import pytest

from tests.fakes.llm import Reply
from tests.fakes.tg import TgUser
from tests.integration.telegram.test_replies import ANN, BOB, replies
from tests.support.slack import SlackStack
from tests.support.stack import Stack, idle
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e
NOTE = re.compile(r"note-\d+")
TOO_MANY = "You have sent 20 messages in the last minute; you can write again in "


def notes_seen(stack: Stack) -> list[str]:
    """The notes the model was asked about, each turn's own message (merged ones too)."""
    return [n for r in stack.fake.requests for n in NOTE.findall(r.last_user_text())]


def seen(stack: Stack, count: int) -> bool:
    return len(notes_seen(stack)) == count


async def burst(stack: TelegramStack, user: TgUser, count: int) -> None:
    """`count` quick messages from `user` in their private chat, and the replies to them."""
    stack.fake.responder = lambda request: Reply(text="noted")
    chat = stack.tg.private_chat(user)
    for n in range(count):
        stack.tg.send(chat, user, f"note-{n:02d}")
    await stack.tg.wait_for(lambda: len(notes_seen(stack)) >= 20)
    await idle(stack.redis_url)


async def test_the_21st_message_in_a_minute_is_refused_once_at_no_model_cost(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    await burst(tg_stack, ANN, 21)
    chat = tg_stack.tg.private_chat(ANN)
    await tg_stack.tg.wait_for(
        lambda: any(m.text.startswith(TOO_MANY) for m in tg_stack.tg.messages(chat))
    )
    tg_stack.tg.send(chat, ANN, "note-21")  # still within the minute: refused in silence
    bob_chat = tg_stack.tg.private_chat(BOB)
    tg_stack.tg.send(bob_chat, BOB, "hello")  # another person is unaffected
    bob = await replies(tg_stack, bob_chat)
    assert bob == ["noted"]
    await idle(tg_stack.redis_url)
    seen = notes_seen(tg_stack)
    assert len(seen) == len(set(seen)) == 20, seen
    refusals = [m.text for m in tg_stack.tg.messages(chat) if m.text.startswith("You have")]
    assert len(refusals) == 1 and re.fullmatch(re.escape(TOO_MANY) + r"\d+ s\.", refusals[0])
    tg_stack.tg.send(chat, ANN, "/usage")  # commands are not limited
    await tg_stack.tg.wait_for(lambda: "Your limits:" in tg_stack.tg.messages(chat)[-1].text)
    assert "Your limits: 0 of 20 messages left this minute." in tg_stack.tg.messages(chat)[-1].text


@pytest.mark.parametrize("tg_stack", [{"PARLEY_ADMINS": f"tg:{ANN.id}"}], indirect=True)
async def test_admins_are_not_limited(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    await burst(tg_stack, ANN, 21)
    await tg_stack.tg.wait_for(lambda: len(notes_seen(tg_stack)) == 21)
    await idle(tg_stack.redis_url)
    chat = tg_stack.tg.private_chat(ANN)
    assert not [m for m in tg_stack.tg.messages(chat) if m.text.startswith("You have")]


@pytest.mark.parametrize("tg_stack", [{"PARLEY_USER_TOKENS_PER_DAY": "50"}], indirect=True)
async def test_a_used_token_budget_refuses_the_next_message_and_usage_shows_it(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    tg_stack.fake.responder = lambda request: Reply(text="a long answer " * 10)
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.tg.send(chat, ANN, "/usage")
    (before,) = await replies(tg_stack, chat)
    assert "Your limits: 20 of 20 messages left this minute; 50 of 50 tokens left today" in before
    tg_stack.tg.send(chat, ANN, "hello")  # this turn crosses the budget, and finishes
    await replies(tg_stack, chat, 2)
    tg_stack.tg.send(chat, ANN, "and again")
    refusal = (await replies(tg_stack, chat, 3))[-1]
    assert refusal.startswith("You have used your 50 tokens for today; the budget renews at ")
    assert len(tg_stack.fake.requests) == 1
    tg_stack.tg.send(chat, ANN, "/usage")
    after = (await replies(tg_stack, chat, 4))[-1]
    assert "19 of 20 messages left this minute; 0 of 50 tokens left today" in after, after
    assert len(tg_stack.fake.requests) == 1


@pytest.mark.parametrize("slack_stack", [{"PARLEY_USER_MESSAGES_PER_MINUTE": "2"}], indirect=True)
async def test_slack_counts_the_same_minute_and_tells_only_the_person(
    slack_stack: SlackStack,
) -> None:
    fake, ann, _ = await slack_stack.begin()
    slack_stack.fake.responder = lambda request: Reply(text="noted")
    dm = fake.dm(ann)
    for n, text in enumerate(("note-00", "note-01"), start=1):
        await fake.say(ann, dm, text)
        await fake.wait_for(partial(seen, slack_stack, n))
    for text in ("note-02", "note-03"):  # over the limit: told once, in an ephemeral
        await fake.say(ann, dm, text)
    await fake.wait_for(lambda: bool(fake.ephemerals))
    await idle(slack_stack.redis_url)
    (told,) = [e["text"] for e in fake.ephemerals]
    assert told.startswith("You have sent 2 messages in the last minute; ")
    assert notes_seen(slack_stack) == ["note-00", "note-01"]
    status, usage = await fake.command(ann, dm, "/usage")
    assert status == 200 and "Your limits: 0 of 2 messages left this minute." in usage, usage
