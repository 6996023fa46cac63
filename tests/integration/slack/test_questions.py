"""`ask_user` in Slack: answered by buttons one question after another, by a reply in the
thread, or by the wrong person; the prompt shows the answers and who gave them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.llm import Reply, ToolCallSpec
from tests.fakes.slack import FakeSlack, Posted, SlackChannel, SlackUser
from tests.integration.slack.test_approvals import buttons
from tests.integration.slack.test_replies import MENTION, answered
from tests.support.slack import SlackStack, block_text

COLOUR = {"question": "Which colour? <!channel>", "options": ["Red", "Blue"]}
WHEN = {"question": "When?", "options": ["Today", "Tomorrow"]}


async def question_in(
    stack: SlackStack, channel: SlackChannel, user: SlackUser, *questions: dict[str, Any]
) -> tuple[str, Posted]:
    fake = stack.fake_slack
    call = ToolCallSpec("ask_user", {"questions": list(questions)})
    stack.fake.enqueue(Reply(text="Let me ask.", tool_calls=[call]))
    asked = await fake.say(user, channel, f"{MENTION} paint the shed")
    await fake.wait_for(lambda: any(m.blocks for m in fake.bot_messages(channel.id, asked.ts)))
    (prompt,) = [m for m in fake.bot_messages(channel.id, asked.ts) if m.blocks]
    return asked.ts, prompt


def now(fake: FakeSlack, channel: SlackChannel, thread: str, ts: str) -> Posted:
    return next(m for m in fake.bot_messages(channel.id, thread) if m.ts == ts)


async def test_questions_answered_by_buttons_one_after_another(slack_stack: SlackStack) -> None:
    fake, ann, general = await slack_stack.begin()
    thread, prompt = await question_in(slack_stack, general, ann, COLOUR, WHEN)
    assert "&lt;!channel&gt;" in block_text(prompt)  # the model's words never notify anyone
    assert set(buttons(prompt)) == {"parley_answer_0", "parley_answer_1", "parley_answer_other"}
    await fake.press(ann, prompt, "parley_answer_1")
    await fake.wait_for(lambda: "Tomorrow" in str(buttons(now(fake, general, thread, prompt.ts))))
    slack_stack.fake.enqueue(Reply(text="Blue, today."))
    await fake.press(ann, now(fake, general, thread, prompt.ts), "parley_answer_0")
    replies = await answered(slack_stack, general, thread, count=3)
    assert replies[-1].shown == "Blue, today."
    result = slack_stack.fake.requests[-1].tool_results()[0][1]
    assert '→ "Blue"' in result and '"When?" → "Today"' in result
    await fake.wait_for(lambda: not buttons(now(fake, general, thread, prompt.ts)))
    final = block_text(now(fake, general, thread, prompt.ts))
    assert "Answered by <@U0ANN>" in final and "→ Today" in final


@pytest.mark.parametrize("slack_stack", [{"PARLEY_ADMINS": "slack:U0ADA"}], indirect=True)
async def test_the_wrong_person_is_refused_and_a_reply_in_the_thread_answers(
    slack_stack: SlackStack,
) -> None:
    await slack_stack.start_worker()
    fake = slack_stack.fake_slack
    ann, bob = fake.user("U0ANN", "ann"), fake.user("U0BOB", "bob")
    general = fake.channel("C0GENERAL", "general")
    thread, prompt = await question_in(slack_stack, general, ann, COLOUR)
    await fake.press(bob, prompt, "parley_answer_0")
    await fake.wait_for(lambda: bool(fake.ephemerals))
    assert fake.ephemerals[0]["user"] == "U0BOB"
    assert "Only the person who asked" in fake.ephemerals[0]["text"]
    assert buttons(now(fake, general, thread, prompt.ts))
    slack_stack.fake.enqueue(Reply(text="Purple, noted."))
    await fake.say(ann, general, "purple please", thread_ts=thread)
    replies = await answered(slack_stack, general, thread, count=3)
    assert replies[-1].shown == "Purple, noted."
    (result,) = [c for _, c in slack_stack.fake.requests[-1].tool_results()]
    assert 'in their own words: "purple please"' in result
    assert len(slack_stack.fake.requests) == 2
    await fake.wait_for(lambda: not buttons(now(fake, general, thread, prompt.ts)))
    assert "Answered by <@U0ANN>" in block_text(now(fake, general, thread, prompt.ts))


@pytest.mark.parametrize(
    "slack_stack",
    [{"PARLEY_CONFIRMATION_TTL": "6", "PARLEY_CONFIRMATION_REMIND": "4"}],
    indirect=True,
)
async def test_a_waiting_question_reminds_its_person_in_the_thread_then_expires(
    slack_stack: SlackStack,
) -> None:
    fake, ann, general = await slack_stack.begin()
    thread, prompt = await question_in(slack_stack, general, ann, WHEN)
    slack_stack.fake.enqueue(Reply(text="No answer; I will wait."))

    def reminded() -> list[Posted]:
        return [m for m in fake.bot_messages(general.id, thread) if "still waiting" in m.text]

    await fake.wait_for(lambda: bool(reminded()))
    assert reminded()[0].text.startswith("<@U0ANN>, this question is still waiting for you")
    replies = await answered(slack_stack, general, thread, count=4)
    assert replies[-1].shown == "No answer; I will wait."
    assert "⌛ Expired" in block_text(now(fake, general, thread, prompt.ts))
    result = slack_stack.fake.requests[-1].tool_results()[0][1]
    assert result.startswith("No answer: the person did not answer")
    assert len(reminded()) == 1


async def test_someone_elses_message_sets_the_question_aside_and_is_answered(
    slack_stack: SlackStack,
) -> None:
    await slack_stack.start_worker()
    fake = slack_stack.fake_slack
    ann, bob = fake.user("U0ANN", "ann"), fake.user("U0BOB", "bob")
    general = fake.channel("C0GENERAL", "general")
    thread, prompt = await question_in(slack_stack, general, ann, COLOUR)
    slack_stack.fake.enqueue(Reply(text="Hello Bob."))
    await fake.say(bob, general, "hello there", thread_ts=thread)
    replies = await answered(slack_stack, general, thread, count=3)
    assert replies[-1].shown == "Hello Bob."
    last = slack_stack.fake.requests[-1]
    (result,) = [c for _, c in last.tool_results()]
    assert result.startswith("No answer: a new message came before the question was answered")
    assert last.last_user_text().splitlines()[-1] == "hello there"
    await fake.wait_for(lambda: not buttons(now(fake, general, thread, prompt.ts)))
    assert "Set aside" in block_text(now(fake, general, thread, prompt.ts))
