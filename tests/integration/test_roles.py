"""Roles in the policy, end to end in Telegram: a rule denies a tool to guests, while a user
is asked, and a stranger is let in only as a guest."""

from __future__ import annotations

import json

import pytest

from tests.fakes.llm import Reply
from tests.integration.test_telegram_approvals import LAUNCH
from tests.integration.test_telegram_replies import ANN, BOB, replies
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e
ROLES = {
    "PARLEY_ALLOWED_USERS": f"tg:{ANN.id}",
    "PARLEY_ALLOW_GUESTS": "true",
    "PARLEY_POLICY": json.dumps([{"action": "deny", "tool": "launch", "role": "guest"}]),
}


@pytest.mark.parametrize("tg_stack", [ROLES], indirect=True)
async def test_a_guest_is_denied_the_tool_a_user_is_asked_about(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    guest_chat = tg_stack.tg.private_chat(BOB)
    tg_stack.fake.enqueue(Reply(tool_calls=[LAUNCH]), Reply(text="I may not launch for you."))
    tg_stack.tg.send(guest_chat, BOB, "launch the rocket")
    assert (await replies(tg_stack, guest_chat))[-1] == "I may not launch for you."
    ((_, refused),) = tg_stack.fake.requests[1].tool_results()
    assert refused == "Not run: the policy does not allow launch here."
    assert not any(m.reply_markup for m in tg_stack.tg.messages(guest_chat))

    user_chat = tg_stack.tg.private_chat(ANN)
    tg_stack.fake.enqueue(Reply(text="Let me launch it.", tool_calls=[LAUNCH]))
    tg_stack.tg.send(user_chat, ANN, "launch the rocket")
    await tg_stack.tg.wait_for(lambda: any(m.reply_markup for m in tg_stack.tg.messages(user_chat)))
    assert len(tg_stack.fake.requests) == 3  # asked, not run: nothing more went to the model
