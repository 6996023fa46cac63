""" "Always allow" in Telegram is one person's, in one chat, until they revoke it with
`/permissions`: it survives /new, spares nobody else the question, and never beats an
operator's deny. Real web app, worker, Redis and database; fake Telegram and model."""

from __future__ import annotations

import json

import pytest

from adapters.chat.permission_list import OWN_HEADER
from tests.fakes.llm import Reply
from tests.fakes.tg import TgChat
from tests.integration.telegram.test_approvals import LAUNCH, buttons, prompt_in
from tests.integration.telegram.test_replies import ANN, BOB
from tests.integration.telegram.test_task_list import current, listed, press
from tests.support.chat_stores import grant_store
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e
ANNS = f"tg:{ANN.id}"


def prompts(stack: TelegramStack, chat: TgChat) -> int:
    return len([m for m in stack.tg.messages(chat) if m.reply_markup])


async def always_allow(stack: TelegramStack, chat: TgChat) -> None:
    """Ann asks to launch in `chat` and presses "Always allow"; the launch is answered."""
    prompt = await prompt_in(stack, chat)
    stack.fake.enqueue(Reply(text="Launched."))
    stack.tg.press(chat, ANN, prompt.message_id, buttons(prompt)["Always allow in this chat"])
    await stack.tg.wait_for(lambda: stack.tg.messages(chat)[-1].text == "Launched.")


async def launched_unasked(stack: TelegramStack, chat: TgChat, said: str) -> None:
    stack.fake.enqueue(Reply(tool_calls=[LAUNCH]), Reply(text=f"{said}: launched."))
    stack.tg.send(chat, ANN, f"@parley_test_bot {said}")
    await stack.tg.wait_for(lambda: stack.tg.messages(chat)[-1].text == f"{said}: launched.")
    assert prompts(stack, chat) == 0


async def test_always_allow_lasts_past_new_until_revoked(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    await always_allow(tg_stack, chat)
    await launched_unasked(tg_stack, chat, "again")
    tg_stack.tg.send(chat, ANN, "/new")
    await tg_stack.tg.wait_for(lambda: "new conversation" in tg_stack.tg.messages(chat)[-1].text)
    await launched_unasked(tg_stack, chat, "after new")

    shown = await listed(tg_stack, chat, command="/permissions")
    async with grant_store(tg_stack) as grants:
        (grant,) = await grants.in_chat(ANNS)
    assert (grant.person, grant.tool, grant.granted_by) == (ANNS, "launch", ANNS)
    assert shown.text.split("\n") == [OWN_HEADER, f"#{grant.id} launch"]
    data = f"perm:revoke:{grant.id}"
    assert buttons(shown) == {f"Revoke #{grant.id}": data}
    revoked = await press(tg_stack, chat, ANN, shown.message_id, data)
    assert revoked == "Revoked: I will ask before using launch again."
    await tg_stack.tg.wait_for(lambda: current(tg_stack, chat, shown.message_id).edits > 0)
    edited = current(tg_stack, chat, shown.message_id)
    assert edited.text.split("\n") == [OWN_HEADER, f"#{grant.id} launch: revoked"]
    assert edited.reply_markup is None
    again = await press(tg_stack, chat, ANN, shown.message_id, data)
    assert again == f"#{grant.id} is already revoked."
    await prompt_in(tg_stack, chat)  # asked again
    assert prompts(tg_stack, chat) == 1


async def test_a_grant_spares_only_its_person_in_its_chat(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    ops, dev = tg_stack.tg.group("Ops"), tg_stack.tg.group("Dev")
    await always_allow(tg_stack, ops)
    await launched_unasked(tg_stack, ops, "in ops")
    await prompt_in(tg_stack, ops, BOB)  # Bob, in the same group, is asked
    elsewhere = await prompt_in(tg_stack, dev)  # Ann, in another group, is asked
    async with grant_store(tg_stack) as grants:
        (grant,) = await grants.in_chat(f"tg:{ops.id}")

        shown = await listed(tg_stack, ops, BOB, command="/permissions")
        assert "perm:revoke" not in json.dumps(shown.reply_markup)  # Bob has none here
        anns = await listed(tg_stack, ops, command="/permissions")
        data = f"perm:revoke:{grant.id}"
        refused = await press(tg_stack, ops, BOB, anns.message_id, data)
        assert refused == f"Only {ANNS}, whose permission it is, or an admin may revoke it."
        forged = await press(tg_stack, dev, ANN, elsewhere.message_id, data)
        assert forged == f"There is no permission #{grant.id} in this chat."
        assert await grants.tools_of(ANNS, f"tg:{ops.id}") == ["launch"]


DENY = {"PARLEY_POLICY": json.dumps([{"action": "deny", "tool": "launch"}])}


@pytest.mark.parametrize("tg_stack", [DENY], indirect=True)
async def test_an_operators_deny_beats_a_grant(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    async with grant_store(tg_stack) as grants:
        await grants.add(ANNS, ANNS, ["launch"], ANNS)
    tg_stack.fake.enqueue(Reply(tool_calls=[LAUNCH]), Reply(text="I may not."))
    tg_stack.tg.send(chat, ANN, "launch it")
    await tg_stack.tg.wait_for(lambda: bool(tg_stack.tg.messages(chat)))
    ((_, result),) = tg_stack.fake.requests[1].tool_results()
    assert result == "Not run: the policy does not allow launch here."
