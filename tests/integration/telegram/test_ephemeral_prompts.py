"""PARLEY_TELEGRAM_EPHEMERAL_PROMPTS: in a group, an approval prompt and a question are
shown only to the person they wait for, answered there, and edited there to say how they
ended; in a private chat they stay ordinary messages."""

from __future__ import annotations

import pytest

from tests.fakes.llm import Reply
from tests.fakes.tg import TgChat, TgUser
from tests.integration.telegram.test_approvals import LAUNCH, buttons
from tests.integration.telegram.test_questions import COLOUR, asking
from tests.integration.telegram.test_replies import ANN, replies
from tests.support.telegram import TelegramStack

ON = {"PARLEY_TELEGRAM_EPHEMERAL_PROMPTS": "true"}


async def shown_to(stack: TelegramStack, chat: TgChat, user: TgUser) -> int:
    """The ephemeral prompt `user` alone sees: its ephemeral id."""
    await stack.tg.wait_for(lambda: bool(stack.tg.ephemerals.seen_by(chat, user.id)))
    (prompt,) = stack.tg.ephemerals.seen_by(chat, user.id)
    assert prompt.reply_markup is not None and prompt.message_id == 0
    assert prompt.ephemeral_id is not None
    return prompt.ephemeral_id


@pytest.mark.parametrize("tg_stack", [ON], indirect=True)
async def test_an_approval_in_a_group_is_seen_and_decided_by_its_person_alone(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Ops")
    tg_stack.fake.enqueue(Reply(text="Let me launch it.", tool_calls=[LAUNCH]))
    tg_stack.tg.send(group, ANN, "@parley_test_bot launch the rocket")
    prompt_id = await shown_to(tg_stack, group, ANN)
    (prompt,) = tg_stack.tg.ephemerals.seen_by(group, ANN.id)
    assert "rocket" in prompt.text
    assert all(m.reply_markup is None for m in tg_stack.tg.messages(group))  # nobody else
    tg_stack.fake.enqueue(Reply(text="Launched!"))
    tg_stack.tg.press_ephemeral(group, ANN, prompt_id, buttons(prompt)["✅ Approve"])
    shown = await replies(tg_stack, group, 2)
    assert shown[-1] == "Launched!"
    await tg_stack.tg.wait_for(lambda: prompt.reply_markup is None, what="the prompt settled")
    assert prompt.text.endswith("✅ Approved by Ann")
    assert tg_stack.fake.requests[-1].tool_results()[0][1] == "launched rocket ✨"


@pytest.mark.parametrize("tg_stack", [ON], indirect=True)
async def test_a_question_in_a_group_is_asked_of_its_person_alone(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Home")
    tg_stack.fake.enqueue(asking(COLOUR))
    tg_stack.tg.send(group, ANN, "@parley_test_bot paint the shed")
    prompt_id = await shown_to(tg_stack, group, ANN)
    (prompt,) = tg_stack.tg.ephemerals.seen_by(group, ANN.id)
    tg_stack.fake.enqueue(Reply(text="Blue it is."))
    tg_stack.tg.press_ephemeral(group, ANN, prompt_id, buttons(prompt)["Blue"])
    shown = await replies(tg_stack, group, 2)
    assert shown[-1] == "Blue it is."
    await tg_stack.tg.wait_for(lambda: prompt.reply_markup is None, what="the prompt settled")
    assert "→ Blue" in prompt.text and "Answered by Ann" in prompt.text


@pytest.mark.parametrize("tg_stack", [ON], indirect=True)
async def test_in_a_private_chat_the_prompt_stays_an_ordinary_message(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.fake.enqueue(asking(COLOUR))
    tg_stack.tg.send(chat, ANN, "paint the shed")
    await tg_stack.tg.wait_for(lambda: any(m.reply_markup for m in tg_stack.tg.messages(chat)))
    assert tg_stack.tg.ephemerals.seen_by(chat, ANN.id) == []


@pytest.mark.parametrize(
    "tg_stack",
    [ON | {"PARLEY_CONFIRMATION_TTL": "6", "PARLEY_CONFIRMATION_REMIND": "4"}],
    indirect=True,
)
async def test_the_reminder_of_a_prompt_only_its_person_sees_is_theirs_alone(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Ops")
    tg_stack.fake.enqueue(Reply(text="Let me launch it.", tool_calls=[LAUNCH]))
    tg_stack.tg.send(group, ANN, "@parley_test_bot launch the rocket")
    await shown_to(tg_stack, group, ANN)

    def reminded() -> list[str]:
        seen = tg_stack.tg.ephemerals.seen_by(group, ANN.id)
        return [m.text for m in seen if "still waiting" in m.text]

    await tg_stack.tg.wait_for(lambda: bool(reminded()), what="the reminder")
    assert reminded()[0].startswith("Ann, this approval request is still waiting for you")
    assert not any("still waiting" in m.text for m in tg_stack.tg.messages(group))
