"""`ask_user` in Telegram: answered by buttons, by a typed reply, by the wrong person, or not
at all; the prompt shows the answers and who gave them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.llm import Reply, ToolCallSpec
from tests.fakes.tg import BotMessage, TgChat, TgUser
from tests.integration.telegram.test_approvals import ADMIN, answer_to, buttons
from tests.integration.telegram.test_replies import ANN, BOB, replies
from tests.support.stack import recorded
from tests.support.telegram import TelegramStack

COLOUR = {"question": "Which colour?", "options": ["Red", "Blue"]}
WHEN = {"question": "When?", "options": ["Today", "Tomorrow", "Next week"]}


def asking(*questions: dict[str, Any]) -> Reply:
    return Reply(
        text="Let me ask.", tool_calls=[ToolCallSpec("ask_user", {"questions": list(questions)})]
    )


async def question_in(
    stack: TelegramStack, chat: TgChat, *questions: dict[str, Any], user: TgUser = ANN
) -> BotMessage:
    """Ask for something the model needs to ask about; the prompt with its buttons."""
    stack.fake.enqueue(asking(*questions))
    stack.tg.send(chat, user, "@parley_test_bot paint the shed")
    await stack.tg.wait_for(lambda: any(m.reply_markup for m in stack.tg.messages(chat)))
    (prompt,) = [m for m in stack.tg.messages(chat) if m.reply_markup]
    return prompt


def prompt_now(stack: TelegramStack, chat: TgChat, message_id: int) -> BotMessage:
    (message,) = [m for m in stack.tg.messages(chat) if m.message_id == message_id]
    return message


def answered_results(stack: TelegramStack) -> list[str]:
    return [
        content
        for request in stack.fake.requests
        for _, content in request.tool_results()
        if "answered" in content or "No answer" in content
    ]


async def test_two_questions_answered_one_after_another_by_buttons(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Home")
    prompt = await question_in(tg_stack, group, COLOUR, WHEN)
    assert "Which colour?" in prompt.text and "When?" in prompt.text
    data = buttons(prompt)
    assert set(data) == {"Red", "Blue", "✏️ Other: type your answer"}
    assert all(len(d.encode()) <= 64 for d in data.values())
    query = tg_stack.tg.press(group, ANN, prompt.message_id, data["Blue"])

    def moved_on() -> bool:
        return "Tomorrow" in buttons(prompt_now(tg_stack, group, prompt.message_id))

    await tg_stack.tg.wait_for(moved_on)
    assert answer_to(tg_stack, query)["text"] == "Noted: Blue"
    assert "→ Blue" in prompt_now(tg_stack, group, prompt.message_id).text
    tg_stack.fake.enqueue(Reply(text="Blue, tomorrow it is."))
    second = buttons(prompt_now(tg_stack, group, prompt.message_id))["Tomorrow"]
    tg_stack.tg.press(group, ANN, prompt.message_id, second)
    shown = await replies(tg_stack, group, 3)
    assert shown[-1] == "Blue, tomorrow it is."
    result = tg_stack.fake.requests[-1].tool_results()[0][1]
    assert '"Which colour?" → "Blue"' in result and '"When?" → "Tomorrow"' in result
    await tg_stack.tg.wait_for(
        lambda: prompt_now(tg_stack, group, prompt.message_id).reply_markup is None
    )
    final = prompt_now(tg_stack, group, prompt.message_id).text
    assert final.endswith("Answered by Ann (@ann)") and "→ Tomorrow" in final


async def test_a_press_on_an_old_prompt_answers_nothing(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    prompt = await question_in(tg_stack, chat, COLOUR, WHEN)
    old = buttons(prompt)
    tg_stack.tg.press(chat, ANN, prompt.message_id, old["Red"])
    await tg_stack.tg.wait_for(
        lambda: "Today" in buttons(prompt_now(tg_stack, chat, prompt.message_id))
    )
    late = tg_stack.tg.press(chat, ANN, prompt.message_id, old["Blue"], check=False)
    await tg_stack.tg.wait_for(
        lambda: any(a["callback_query_id"] == late for a in tg_stack.tg.callback_answers)
    )
    assert "answered already" in str(answer_to(tg_stack, late)["text"])
    assert "→ Red" in prompt_now(tg_stack, chat, prompt.message_id).text


@pytest.mark.parametrize("tg_stack", [{"PARLEY_ADMINS": "tg:1009"}], indirect=True)
async def test_only_the_asker_or_an_admin_may_answer(tg_stack: TelegramStack) -> None:
    await tg_stack.start_worker()
    group = tg_stack.tg.group("Home")
    prompt = await question_in(tg_stack, group, COLOUR)
    query = tg_stack.tg.press(group, BOB, prompt.message_id, buttons(prompt)["Red"])
    await tg_stack.tg.wait_for(
        lambda: any(a["callback_query_id"] == query for a in tg_stack.tg.callback_answers)
    )
    answer = answer_to(tg_stack, query)
    assert answer["show_alert"] is True and "Only the person who asked" in str(answer["text"])
    assert prompt_now(tg_stack, group, prompt.message_id).reply_markup is not None
    assert answered_results(tg_stack) == []
    tg_stack.fake.enqueue(Reply(text="Blue, as the admin says."))
    tg_stack.tg.press(group, ADMIN, prompt.message_id, buttons(prompt)["Blue"])
    await replies(tg_stack, group, 3)
    assert '"Which colour?" → "Blue"' in answered_results(tg_stack)[0]
    await tg_stack.tg.wait_for(
        lambda: prompt_now(tg_stack, group, prompt.message_id).text.endswith(
            "Answered by Ada (@ada)"
        )
    )


async def test_a_typed_reply_answers_in_the_persons_own_words_once(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    prompt = await question_in(tg_stack, chat, COLOUR, WHEN)
    other = tg_stack.tg.press(
        chat, ANN, prompt.message_id, buttons(prompt)["✏️ Other: type your answer"]
    )
    await tg_stack.tg.wait_for(
        lambda: any(a["callback_query_id"] == other for a in tg_stack.tg.callback_answers)
    )
    assert "Reply to the question" in str(answer_to(tg_stack, other)["text"])
    tg_stack.fake.enqueue(Reply(text="Green it is."))
    tg_stack.tg.send(chat, ANN, "green, and whenever you like")
    shown = await replies(tg_stack, chat, 3)
    assert shown[-1] == "Green it is."
    last = tg_stack.fake.requests[-1]
    (result,) = [content for _, content in last.tool_results()]
    assert 'in their own words: "green, and whenever you like"' in result
    assert "→ no answer" not in result
    assert "green, and whenever" not in last.last_user_text().replace(result, "")
    assert len(tg_stack.fake.requests) == 2  # answered once: no turn for it as a message
    await tg_stack.tg.wait_for(
        lambda: prompt_now(tg_stack, chat, prompt.message_id).reply_markup is None
    )
    assert prompt_now(tg_stack, chat, prompt.message_id).text.endswith("Answered by Ann (@ann)")


@pytest.mark.parametrize("tg_stack", [{"PARLEY_CONFIRMATION_TTL": "5"}], indirect=True)
async def test_an_unanswered_question_tells_the_model_there_was_no_answer(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    prompt = await question_in(tg_stack, chat, COLOUR)
    tg_stack.fake.enqueue(Reply(text="No answer, so I left it."))

    def expired() -> bool:
        message = prompt_now(tg_stack, chat, prompt.message_id)
        return message.reply_markup is None and "Expired" in message.text

    await tg_stack.tg.wait_for(expired)
    shown = await replies(tg_stack, chat, 3)
    assert shown[-1] == "No answer, so I left it."
    (result,) = answered_results(tg_stack)
    assert result.startswith("No answer: the person did not answer")
    assert "denied" not in result.lower() and "refus" not in result.replace("not a refusal", "")


@pytest.mark.e2e
async def test_a_waiting_question_survives_its_worker_killed_and_a_new_one_resumes(
    tg_stack: TelegramStack,
) -> None:
    """No worker holds the question while it waits: the one that asked is killed with
    SIGKILL, the press is taken by the web process, and a worker started afterwards
    resumes the turn with the answer, once."""
    first = await tg_stack.start_worker_process()
    chat = tg_stack.tg.private_chat(ANN)
    prompt = await question_in(tg_stack, chat, COLOUR, WHEN)
    await recorded(tg_stack, f"tg:{chat.id}", 2)  # the turn ended, waiting for the answer
    tg_stack.kill(first)
    await first.wait()
    query = tg_stack.tg.press(chat, ANN, prompt.message_id, buttons(prompt)["Red"])
    await tg_stack.tg.wait_for(
        lambda: "Tomorrow" in buttons(prompt_now(tg_stack, chat, prompt.message_id))
    )
    assert answer_to(tg_stack, query)["text"] == "Noted: Red"
    tg_stack.fake.enqueue(Reply(text="Red, next week."))
    last = buttons(prompt_now(tg_stack, chat, prompt.message_id))["Next week"]
    tg_stack.tg.press(chat, ANN, prompt.message_id, last)
    await tg_stack.start_worker_process()
    shown = await replies(tg_stack, chat, 3)
    assert shown[-1] == "Red, next week."
    (result,) = answered_results(tg_stack)
    assert '"Which colour?" → "Red"' in result and '"When?" → "Next week"' in result
    assert len(tg_stack.fake.requests) == 2


@pytest.mark.parametrize("tg_stack", [{"PARLEY_CONFIRMATION_TTL": "6"}], indirect=True)
async def test_answers_given_before_the_expiry_reach_the_model_with_the_rest_unanswered(
    tg_stack: TelegramStack,
) -> None:
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    prompt = await question_in(tg_stack, chat, COLOUR, WHEN)
    tg_stack.tg.press(chat, ANN, prompt.message_id, buttons(prompt)["Red"])
    await tg_stack.tg.wait_for(
        lambda: "Today" in buttons(prompt_now(tg_stack, chat, prompt.message_id))
    )
    tg_stack.fake.enqueue(Reply(text="Red, some day."))
    await replies(tg_stack, chat, 3)
    (result,) = answered_results(tg_stack)
    assert result.startswith("No answer: the person did not answer")
    assert '"Which colour?" → "Red"' in result and '"When?" → no answer' in result
    final = prompt_now(tg_stack, chat, prompt.message_id)
    assert final.reply_markup is None and "→ Red" in final.text and "Expired" in final.text


async def test_a_long_typed_answer_is_whole_for_the_model_and_short_on_the_prompt(
    tg_stack: TelegramStack,
) -> None:
    """Three questions answered by 2,000 characters of one's own words: the model reads
    them whole, the prompt (4,096 characters at most) shows each cut short."""
    await tg_stack.start_worker()
    chat = tg_stack.tg.private_chat(ANN)
    third = {"question": "Where?", "options": ["Inside", "Outside"]}
    prompt = await question_in(tg_stack, chat, COLOUR, WHEN, third)
    words = "green " * 333
    tg_stack.fake.enqueue(Reply(text="Noted."))
    tg_stack.tg.send(chat, ANN, words.strip())
    await replies(tg_stack, chat, 3)
    (result,) = answered_results(tg_stack)
    assert result.count(words.strip()) == 3
    await tg_stack.tg.wait_for(
        lambda: prompt_now(tg_stack, chat, prompt.message_id).reply_markup is None
    )
    final = prompt_now(tg_stack, chat, prompt.message_id).text
    assert final.count("…” (own words)") == 3 and final.endswith("Answered by Ann (@ann)")
