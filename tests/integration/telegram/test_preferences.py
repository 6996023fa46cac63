"""Preferences in Telegram: set with /preferences, applied to each of the person's turns
(language and instruction in the prompt, the zone on the time stamp, the model of the call)
and to nobody else's. Real web app, worker, Redis and database; fake Telegram and model."""

from __future__ import annotations

import pytest

from tests.fakes.llm import Reply
from tests.fakes.tg import TgChat, TgUser
from tests.integration.telegram.test_approvals import ADMIN
from tests.integration.telegram.test_memory import ask
from tests.integration.telegram.test_replies import ANN, BOB
from tests.integration.telegram.test_task_list import listed
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e
MODELS = {"PARLEY_ADMINS": f"tg:{ADMIN.id}", "PARLEY_USER_MODELS": "claude-small"}


async def prefer(stack: TelegramStack, chat: TgChat, user: TgUser, args: str) -> str:
    return (await listed(stack, chat, user, command=f"/preferences {args}".strip())).text


async def test_language_and_instruction_reach_only_their_persons_prompt(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    set_language = await prefer(tg_stack, chat, ANN, "language Portuguese")
    assert set_language.startswith("Language set to Portuguese.")
    await prefer(tg_stack, chat, ANN, "instruction answer in one sentence")
    shown = await prefer(tg_stack, chat, ANN, "")
    assert "• Language: Portuguese" in shown and "• Instruction: answer in one sentence" in shown
    assert "• Time zone: not set (UTC)" in shown
    assert await prefer(tg_stack, chat, ANN, "language English2") == (
        "A language is its name or tag in letters, at most 64 characters "
        "(e.g. Portuguese, português, pt-BR)."
    )

    tg_stack.fake.enqueue(Reply(text="Olá!"))
    (request,) = await ask(tg_stack, chat, ANN, "hello")
    system = request.system_text()
    assert "Answer Ann (@ann) in Portuguese, unless they ask for another language." in system
    assert '"answer in one sentence"' in system
    tg_stack.fake.enqueue(Reply(text="Hi Bob."))
    (bobs,) = await ask(tg_stack, tg_stack.tg.private_chat(BOB), BOB, "hello")
    assert "Portuguese" not in bobs.system_text() and "one sentence" not in bobs.system_text()

    assert (await prefer(tg_stack, chat, ANN, "reset language")).startswith("Language reset")
    tg_stack.fake.enqueue(Reply(text="Hello."))
    (after,) = await ask(tg_stack, chat, ANN, "hello again")
    assert "Portuguese" not in after.system_text() and "one sentence" in after.system_text()


async def test_a_time_zone_set_by_command_stamps_the_next_message(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    tg_stack.fake.enqueue(Reply(text="ok"), Reply(text="ok"))
    (before,) = await ask(tg_stack, chat, ANN, "what time is it?")
    assert " UTC]" in before.last_user_text()
    answer = await prefer(tg_stack, chat, ANN, "timezone Asia/Tokyo")
    assert answer.startswith("Time zone set to Asia/Tokyo.")
    (after,) = await ask(tg_stack, chat, ANN, "and now?")
    assert " JST]" in after.last_user_text()
    assert "time zone Asia/Tokyo" in after.system_text()


@pytest.mark.parametrize("tg_stack", [MODELS], indirect=True)
async def test_a_preferred_model_is_used_unless_the_chat_has_its_own(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Ops")
    refused = await prefer(tg_stack, group, ANN, "model claude-big")
    assert refused == "claude-big is not a model you may choose. You may choose: claude-small."
    assert (await prefer(tg_stack, group, ANN, "model claude-small")).startswith("Model set")
    tg_stack.fake.enqueue(Reply(text="small"), Reply(text="default"), Reply(text="admin's"))
    (anns,) = await ask(tg_stack, group, ANN, "@parley_test_bot hi")
    assert anns.body["model"] == "claude-small"
    (bobs,) = await ask(tg_stack, group, BOB, "@parley_test_bot hi")
    assert bobs.body["model"] == "claude-test"  # PARLEY_MODEL: Bob chose nothing
    await listed(tg_stack, group, ADMIN, command="/model claude-admin")
    (chats,) = await ask(tg_stack, group, ANN, "@parley_test_bot hi again")
    assert chats.body["model"] == "claude-admin"  # the chat's model, set by an admin, wins
