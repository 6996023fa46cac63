"""The operator's skills in Telegram: `/skills` lists them for anyone; a group's admin
switches one off there (`/skills off NAME`), and that group's turns no longer list it while
another group's still do, and `load_skill` refuses it there; `/skills on` brings it back.
Real web app, worker, Redis and database; fake Telegram and model."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.fakes.llm import Reply, ToolCallSpec
from tests.integration.telegram.test_approvals import ADMIN
from tests.integration.telegram.test_chat_settings import MENTION, said
from tests.integration.telegram.test_memory import ask
from tests.integration.telegram.test_replies import ANN
from tests.skills.making import write_skill
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e
SKILLS = Path(tempfile.mkdtemp(prefix="parley-test-skills-"))
SETTINGS = {"PARLEY_ADMINS": f"tg:{ADMIN.id}", "PARLEY_SKILLS_DIR": str(SKILLS)}
LOAD_GREETING = Reply(tool_calls=[ToolCallSpec("load_skill", {"name": "greeting"})])


@pytest.mark.parametrize("tg_stack", [SETTINGS], indirect=True)
async def test_a_skill_switched_off_in_one_group_is_gone_there_alone(
    tg_stack: TelegramStack,
) -> None:
    write_skill(SKILLS, "greeting", "Greet people in French.", "Say bonjour.")
    write_skill(SKILLS, "farewell", "Say goodbye.", "Say au revoir.")
    await tg_stack.start_worker()
    ops, dev = tg_stack.tg.group("Ops"), tg_stack.tg.group("Dev")
    listed = await said(tg_stack, ops, ANN, "/skills")
    assert listed.startswith(
        "Skills in this chat:\n• farewell: Say goodbye.\n• greeting: Greet people in French.\n"
    )
    refused = await said(tg_stack, ops, ANN, "/skills off greeting")
    assert refused == "Only an admin may switch skills on or off in this chat."
    unknown = await said(tg_stack, ops, ADMIN, "/skills off juggling")
    assert unknown == "There is no skill 'juggling' here. Skills: farewell, greeting."
    off = await said(tg_stack, ops, ADMIN, "/skills off greeting")
    assert off == "The skill greeting is switched off in this chat: I will not use it here."
    assert "• greeting (switched off here): " in await said(tg_stack, ops, ANN, "/skills")

    tg_stack.fake.enqueue(LOAD_GREETING, Reply(text="ok"), LOAD_GREETING, Reply(text="ok"))
    in_ops = await ask(tg_stack, ops, ANN, f"{MENTION} hello")
    in_dev = await ask(tg_stack, dev, ANN, f"{MENTION} hello")
    assert "- greeting: " not in in_ops[0].system_text()
    assert "- farewell: " in in_ops[0].system_text()
    assert "- greeting: " in in_dev[0].system_text()
    ((_, refusal),) = in_ops[1].tool_results()
    assert "The skill greeting is switched off in this chat." in refusal
    ((_, loaded),) = in_dev[1].tool_results()
    assert loaded.startswith('<skill name="greeting">\nSay bonjour.\n</skill>')

    on = await said(tg_stack, ops, ADMIN, "/skills on greeting")
    assert on == "The skill greeting is switched on in this chat again."
    tg_stack.fake.enqueue(Reply(text="ok"))
    (again,) = await ask(tg_stack, ops, ANN, f"{MENTION} hello again")
    assert "- greeting: " in again.system_text()
