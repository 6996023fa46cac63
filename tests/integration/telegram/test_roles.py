"""Roles in the policy, end to end in Telegram: a rule denies a tool to guests, while a user
is asked, and a stranger is let in only as a guest."""

from __future__ import annotations

import json

import pytest

from tests.fakes.llm import Reply, ToolCallSpec
from tests.integration.telegram.test_approvals import ADMIN, LAUNCH, buttons, prompt_in
from tests.integration.telegram.test_replies import ANN, BOB, replies
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


ADMIN_MAY_LAUNCH = {
    "PARLEY_ADMINS": f"tg:{ADMIN.id}",
    "PARLEY_POLICY": json.dumps([{"action": "allow", "tool": "launch", "role": "admin"}]),
}


@pytest.mark.parametrize("tg_stack", [ADMIN_MAY_LAUNCH], indirect=True)
async def test_an_admins_approval_leaves_the_rest_of_the_turn_to_the_person_who_asked(
    tg_stack: TelegramStack,
) -> None:
    """Ada (an admin, who may launch without asking) approves Bob's launch in a group; when
    the model launches again in the same turn, it is still Bob's turn: he is asked again."""
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Ops")
    prompt = await prompt_in(tg_stack, group, BOB)
    again = ToolCallSpec("launch", {"target": "second rocket"})
    tg_stack.fake.enqueue(Reply(text="And another.", tool_calls=[again]))
    tg_stack.tg.press(group, ADMIN, prompt.message_id, buttons(prompt)["✅ Approve"])

    def asked_twice() -> bool:
        return len([m for m in tg_stack.tg.messages(group) if m.reply_markup]) == 1 and any(
            "second rocket" in m.text for m in tg_stack.tg.messages(group) if m.reply_markup
        )

    await tg_stack.tg.wait_for(asked_twice)
    resumed = tg_stack.fake.requests[-1]
    assert resumed.tool_results() == [(resumed.tool_results()[0][0], "launched rocket ✨")]
    assert "you are talking with Bob" in resumed.system_text()
    assert "chat: group" in resumed.system_text()
    assert len(tg_stack.fake.requests) == 2  # the second launch waits for Bob or an admin
