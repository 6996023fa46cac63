"""Approval buttons in Telegram: approve, deny, always allow, the wrong person, expiry."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.redis.confirmations import Confirmations
from tests.fakes.llm import Reply, ToolCallSpec
from tests.fakes.tg import BotMessage, TgChat, TgUser
from tests.integration.telegram.test_replies import ANN, BOB, replies
from tests.support.telegram import TelegramStack

LAUNCH = ToolCallSpec("launch", {"target": "rocket ✨"})
ADMIN = TgUser(id=1009, first_name="Ada", username="ada")


async def prompt_in(
    stack: TelegramStack, chat: TgChat, user: TgUser = ANN, thread_id: int | None = None
) -> BotMessage:
    """Ask for something that needs approval (in the topic `thread_id`, if given); the
    prompt with its buttons."""
    stack.fake.enqueue(Reply(text="Let me launch it.", tool_calls=[LAUNCH]))
    stack.tg.send(chat, user, "@parley_test_bot launch the rocket", thread_id=thread_id)

    def prompted() -> bool:
        return any(m.reply_markup for m in stack.tg.messages(chat))

    await stack.tg.wait_for(prompted)
    (prompt,) = [m for m in stack.tg.messages(chat) if m.reply_markup]
    return prompt


def buttons(message: BotMessage) -> dict[str, str]:
    markup = message.reply_markup or {}
    return {b["text"]: b["callback_data"] for row in markup["inline_keyboard"] for b in row}


async def settled(stack: TelegramStack, chat: TgChat) -> BotMessage:
    """The prompt, once the press has taken its buttons away (the web process edits it)."""
    await stack.tg.wait_for(lambda: stack.tg.messages(chat)[1].reply_markup is None)
    return stack.tg.messages(chat)[1]


def answer_to(stack: TelegramStack, query_id: str) -> dict[str, object]:
    (answer,) = [a for a in stack.tg.callback_answers if a["callback_query_id"] == query_id]
    return answer


async def test_the_prompt_shows_the_exact_arguments_and_approve_runs_the_tool(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Ops")
    prompt = await prompt_in(tg_stack, group)
    assert "launch" in prompt.text and '"target": "rocket ✨"' in prompt.text
    data = buttons(prompt)
    assert set(data) == {"✅ Approve", "❌ Deny", "Always allow in this chat"}
    assert all(len(d.encode()) <= 64 and "rocket" not in d for d in data.values())
    tg_stack.fake.enqueue(Reply(text="Launched!"))
    query = tg_stack.tg.press(group, ANN, prompt.message_id, data["✅ Approve"])
    shown = await replies(tg_stack, group, 3)
    assert shown[0] == "Let me launch it."
    assert shown[-1] == "Launched!"
    assert answer_to(tg_stack, query)["text"] == "Approved."
    assert (await settled(tg_stack, group)).text.endswith("✅ Approved by Ann")
    assert tg_stack.fake.requests[-1].tool_results()[0][1] == "launched rocket ✨"


async def test_deny_tells_the_model_and_the_prompt_says_so(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    prompt = await prompt_in(tg_stack, chat)
    tg_stack.fake.enqueue(Reply(text="Okay, I will not."))
    tg_stack.tg.press(chat, ANN, prompt.message_id, buttons(prompt)["❌ Deny"])
    shown = await replies(tg_stack, chat, 3)
    assert shown[-1] == "Okay, I will not."
    assert (await settled(tg_stack, chat)).text.endswith("❌ Denied by Ann")
    assert "Denied" in tg_stack.fake.requests[-1].tool_results()[0][1]


@pytest.mark.parametrize("tg_stack", [{"PARLEY_ADMINS": "tg:1009"}], indirect=True)
async def test_only_the_requester_or_an_admin_may_decide(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Ops")
    prompt = await prompt_in(tg_stack, group)
    query = tg_stack.tg.press(group, BOB, prompt.message_id, buttons(prompt)["✅ Approve"])
    await tg_stack.tg.wait_for(lambda: bool(tg_stack.tg.callback_answers))
    answer = answer_to(tg_stack, query)
    assert answer["show_alert"] is True
    assert "Only the person who asked" in str(answer["text"])
    assert tg_stack.tg.messages(group)[1].reply_markup is not None
    tg_stack.fake.enqueue(Reply(text="Launched by the admin's leave."))
    tg_stack.tg.press(group, ADMIN, prompt.message_id, buttons(prompt)["✅ Approve"])
    await replies(tg_stack, group, 3)
    assert (await settled(tg_stack, group)).text.endswith("✅ Approved by Ada")
    assert len([r for r in tg_stack.fake.requests if r.tool_results()]) == 1


async def test_always_allow_skips_the_next_prompt_in_this_chat(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    prompt = await prompt_in(tg_stack, chat)
    tg_stack.fake.enqueue(Reply(text="Launched."))
    tg_stack.tg.press(chat, ANN, prompt.message_id, buttons(prompt)["Always allow in this chat"])
    await replies(tg_stack, chat, 3)
    tg_stack.fake.enqueue(Reply(tool_calls=[LAUNCH]), Reply(text="Launched again."))
    tg_stack.tg.send(chat, ANN, "once more")
    shown = await replies(tg_stack, chat, 4)
    assert shown[-1] == "Launched again."
    assert len([m for m in tg_stack.tg.messages(chat) if m.reply_markup]) == 0
    assert "allowed in this chat from now on" in (await settled(tg_stack, chat)).text


@pytest.mark.parametrize("tg_stack", [{"PARLEY_CONFIRMATION_TTL": "5"}], indirect=True)
async def test_an_expired_request_loses_its_buttons_and_a_late_press_changes_nothing(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    prompt = await prompt_in(tg_stack, chat)
    late = buttons(prompt)["✅ Approve"]  # a client that still shows the old buttons presses
    tg_stack.fake.enqueue(Reply(text="It expired, so I did not launch."))

    def expired() -> bool:
        message = tg_stack.tg.messages(chat)[1]
        return message.reply_markup is None and "Expired" in message.text

    await tg_stack.tg.wait_for(expired)
    shown = await replies(tg_stack, chat, 3)
    assert shown[-1] == "It expired, so I did not launch."
    query = tg_stack.tg.press(chat, ANN, prompt.message_id, late, check=False)
    await tg_stack.tg.wait_for(
        lambda: any(a["callback_query_id"] == query for a in tg_stack.tg.callback_answers)
    )
    assert "expired" in str(answer_to(tg_stack, query)["text"])
    assert "Approved" not in tg_stack.tg.messages(chat)[1].text
    assert not any("launched rocket" in str(r.tool_results()) for r in tg_stack.fake.requests)


async def test_a_decision_recorded_but_never_queued_is_queued_by_the_redelivered_press(
    tg_stack: TelegramStack,
) -> None:
    """The web process decided in Redis and died before queueing the decision: Telegram
    delivers the press again, and the turn goes on (once)."""
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    prompt = await prompt_in(tg_stack, chat)
    approve = buttons(prompt)["✅ Approve"]
    confirmation_id = approve.split(":")[1]
    redis = Redis.from_url(tg_stack.redis_url)
    try:
        decided = await Confirmations(redis).decide(confirmation_id, "approved", "tg:1001")
    finally:
        await redis.aclose()
    assert decided == "ok"
    tg_stack.fake.enqueue(Reply(text="Launched after all."))
    tg_stack.tg.press(chat, ANN, prompt.message_id, approve)
    tg_stack.tg.press(chat, ANN, prompt.message_id, approve, check=False)
    shown = await replies(tg_stack, chat, 3)
    assert shown[-1] == "Launched after all."
    assert len([r for r in tg_stack.fake.requests if r.tool_results()]) == 1
