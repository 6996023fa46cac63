"""A pending approval reminds its person once before it expires; a policy rule may give its
approvals a wait of their own; an expired approval tells the model no decision was made."""

from __future__ import annotations

import json

import pytest
from arq.connections import RedisSettings, create_pool

from bot.redis import keys
from bot.session.decisions import EXPIRED
from tests.fakes.llm import Reply
from tests.fakes.tg import BotMessage, TgChat
from tests.integration.telegram.test_approvals import buttons, prompt_in
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.telegram import TelegramStack

REMINDED = "this approval request is still waiting for you"


def reminders(stack: TelegramStack, chat: TgChat) -> list[BotMessage]:
    return [m for m in stack.tg.messages(chat) if REMINDED in m.text]


@pytest.mark.parametrize(
    "tg_stack",
    [{"PARLEY_CONFIRMATION_TTL": "7", "PARLEY_CONFIRMATION_REMIND": "5"}],
    indirect=True,
)
async def test_a_waiting_approval_reminds_its_person_once_whatever_runs_the_job(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Ops")
    prompt = await prompt_in(tg_stack, group)
    confirmation_id = buttons(prompt)["✅ Approve"].split(":")[1]
    pool = await create_pool(RedisSettings.from_dsn(tg_stack.redis_url))
    try:  # the job delivered again, and at once, to both workers
        for _ in range(3):
            await pool.enqueue_job(keys.REMIND_JOB, confirmation_id, _defer_by=2)
    finally:
        await pool.aclose()
    await tg_stack.tg.wait_for(lambda: bool(reminders(tg_stack, group)), what="a reminder")
    (reminder,) = reminders(tg_stack, group)
    assert reminder.text.startswith("Ann, " + REMINDED)
    assert reminder.reply_to == prompt.message_id
    assert {"type": "text_link", "offset": 0, "length": 3, "url": "tg://user?id=1001"} in (
        reminder.entities
    )
    tg_stack.fake.enqueue(Reply(text="Nobody decided, so I did not launch."))
    await tg_stack.tg.wait_for(lambda: "Expired" in tg_stack.tg.messages(group)[1].text)
    shown = await replies(tg_stack, group, 4)
    assert shown[-1] == "Nobody decided, so I did not launch."
    assert len(reminders(tg_stack, group)) == 1


@pytest.mark.parametrize(
    "tg_stack",
    [{"PARLEY_POLICY": json.dumps([{"action": "ask", "tool": "launch", "timeout": 5}])}],
    indirect=True,
)
async def test_a_rules_own_wait_expires_its_approvals_and_the_model_is_told_no_decision(
    tg_stack: TelegramStack,
) -> None:
    """Default settings but the rule: 600 s for other approvals, 5 s for this one, and a
    reminder 120 s before expiry that such a short wait never gets."""
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    prompt = await prompt_in(tg_stack, chat)
    assert "expires in 1 min" in prompt.text
    tg_stack.fake.enqueue(Reply(text="No decision came, so I did not launch."))
    await tg_stack.tg.wait_for(lambda: "Expired" in tg_stack.tg.messages(chat)[1].text)
    shown = await replies(tg_stack, chat, 3)
    assert shown[-1] == "No decision came, so I did not launch."
    ((_, result),) = tg_stack.fake.requests[-1].tool_results()
    assert result == EXPIRED
    assert result.startswith("Not run: no decision was made") and "Denied by" not in result
    assert reminders(tg_stack, chat) == []
    async with tg_stack.client() as client:  # the record tells an expiry from a decision
        listed = await client.get("/api/metrics/runs", params={"trigger": "expiry"})
        decided = await client.get("/api/metrics/runs", params={"trigger": "decision"})
    assert [r["trigger"] for r in listed.json()["items"]] == ["expiry"]
    assert decided.json()["items"] == []
