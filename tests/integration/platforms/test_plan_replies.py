"""`/mode plan` in Telegram and Slack: the chat's mode is kept, and a plan_execute turn's
plan shows above its answer as a checklist redrawn as the steps finish, through the real
SDKs, the fake platforms and a real worker."""

from __future__ import annotations

import json

import pytest

from adapters.chat.mode_commands import SAID
from tests.fakes.llm import Reply
from tests.fakes.tg import TgUser
from tests.integration.slack.test_replies import MENTION, answered
from tests.integration.telegram.test_replies import replies
from tests.support.slack import SlackStack
from tests.support.telegram import TelegramStack

pytestmark = pytest.mark.e2e
ANN = TgUser(id=1001, first_name="Ann", username="ann")
PLAN = {
    "steps": [
        {"id": 1, "title": "Find the number", "depends_on": []},
        {"id": 2, "title": "Double it", "depends_on": [1]},
    ]
}
ANSWER = "It is 84."


def plan_replies() -> list[Reply]:
    return [
        Reply(text=json.dumps(PLAN)),
        Reply(text="The number is 42.", delay=0.3),
        Reply(text="Doubled, 84.", delay=0.3),
        Reply(text=ANSWER, chunk_size=2, delay=0.05),
    ]


CHECKED = f"Plan\n✅ Find the number\n✅ Double it\n\n{ANSWER}"


async def test_telegram_shows_the_plan_as_a_checklist(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    chat = tg.private_chat(ANN)
    tg.send(chat, ANN, "/mode plan")
    (said,) = await replies(tg_stack, chat)
    assert said == f"From now on I answer {SAID['plan_execute']} here."
    tg_stack.fake.enqueue(*plan_replies())
    tg.send(chat, ANN, "what is twice the number?")
    shown = await replies(tg_stack, chat, count=2)
    assert shown[-1] == CHECKED
    drafts = [d.text for d in tg.drafts if d.chat_id == chat.id]
    assert "Plan\n⏳ Find the number\n⬜ Double it" in drafts
    assert "Plan\n✅ Find the number\n⏳ Double it" in drafts
    assert [c for c in tg.calls if not c.ok] == []

    tg.send(chat, ANN, "/mode direct")
    await replies(tg_stack, chat, count=3)
    tg_stack.fake.enqueue(Reply(text="Directly."))
    tg.send(chat, ANN, "and now?")
    assert (await replies(tg_stack, chat, count=4))[-1] == "Directly."


async def test_telegram_groups_let_only_admins_change_the_mode(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    tg = tg_stack.tg
    group = tg.group("Team")
    tg.send(group, ANN, "/mode plan")
    (said,) = await replies(tg_stack, group)
    assert said == "Here I answer directly. Only an admin may change it."


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ADMINS": "slack:U0ADA"}], indirect=True)
async def test_slack_shows_the_plan_above_the_answer(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    status, said = await fake.command(ann, general, "/mode", "plan")
    assert status == 200 and said == "Here I answer directly. Only an admin may change it."
    ada = fake.user("U0ADA", "ada")
    status, said = await fake.command(ada, general, "/mode", "plan")
    assert status == 200 and said.startswith("From now on I answer by planning first")
    status, said = await fake.command(ann, general, "/mode", "turbo")
    assert status == 200 and said.startswith("There is no mode 'turbo'.")
    slack_stack.fake.enqueue(*plan_replies())
    asked = await fake.say(ann, general, f"{MENTION} what is twice the number?")
    (reply,) = await answered(slack_stack, general, asked.ts, count=1)
    assert reply.shown == ANSWER  # the plan is the stream's task updates, above the text
    assert reply.streaming == "stopped"
    steps = [(t["id"], t["title"], t["status"]) for t in reply.tasks.values()]
    assert steps == [("1", "Find the number", "complete"), ("2", "Double it", "complete")]
    assert reply.tasks["1"]["output"] == "The number is 42."
    history = [(t["id"], t["status"]) for t in reply.task_history]
    assert history == [
        ("1", "in_progress"),
        ("2", "pending"),
        ("1", "complete"),
        ("2", "in_progress"),
        ("2", "complete"),
    ]
    assert len(slack_stack.fake.requests) == 4


async def test_slack_dms_show_the_plan_as_a_checklist(slack_stack: SlackStack) -> None:
    """A DM outside threads is edited, not streamed: the plan is a checklist there."""
    fake, ann, _ = await slack_stack.begin()
    dm = fake.dm(ann)
    status, said = await fake.command(ann, dm, "/mode", "plan")
    assert status == 200 and said.startswith("From now on I answer by planning first")
    slack_stack.fake.enqueue(*plan_replies())
    await fake.say(ann, dm, "what is twice the number?")
    (reply,) = await answered(slack_stack, dm, None, count=1)
    assert reply.shown == CHECKED.replace("Plan", "**Plan**", 1)  # markdown_text, as sent
