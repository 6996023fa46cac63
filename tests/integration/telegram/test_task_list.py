"""`/tasks` in Telegram: the chat's tasks (its topics' included) with a Cancel button each,
and what every press of one is answered."""

from __future__ import annotations

import pytest

from adapters.chat.task_list import EMPTY, MALFORMED
from bot.tasks.book import TaskBook
from bot.tasks.model import CONFIG_CREATOR
from bot.vocabulary.envelope import Sender
from tests.fakes.tg import BotMessage, TgChat, TgUser
from tests.integration.telegram.test_approvals import ADMIN, answer_to, buttons
from tests.integration.telegram.test_replies import ANN, BOB
from tests.support.chat_tasks import add_task, task_book
from tests.support.telegram import TelegramStack

ANN_SENDER = Sender(id=f"tg:{ANN.id}", name="Ann (@ann)")
BOB_SENDER = Sender(id=f"tg:{BOB.id}", name="Bob (@bob)")


async def listed(
    stack: TelegramStack,
    chat: TgChat,
    user: TgUser = ANN,
    thread_id: int | None = None,
    command: str = "/tasks",
) -> BotMessage:
    """Send `command` in `chat` (or its topic); the bot's answer."""
    before = len(stack.tg.messages(chat))
    stack.tg.send(chat, user, command, thread_id=thread_id)
    await stack.tg.wait_for(lambda: len(stack.tg.messages(chat)) > before)
    return stack.tg.messages(chat)[-1]


async def press(stack: TelegramStack, chat: TgChat, user: TgUser, message: int, data: str) -> str:
    """Press `data` on `message` (present or not); the text the press was answered with."""
    query = stack.tg.press(chat, user, message, data, check=False)
    answered = stack.tg.callback_answers
    await stack.tg.wait_for(lambda: any(a["callback_query_id"] == query for a in answered))
    return str(answer_to(stack, query)["text"])


def current(stack: TelegramStack, chat: TgChat, message_id: int) -> BotMessage:
    return next(m for m in stack.tg.messages(chat) if m.message_id == message_id)


async def status_of(book: TaskBook, task_id: int) -> str:
    task = await book.get(task_id)
    assert task is not None
    return task.status


async def test_the_list_shows_the_chat_and_its_topics_and_no_other_chat(
    tg_stack: TelegramStack,
) -> None:
    forum = tg_stack.tg.supergroup("Team", forum=True)
    topic = tg_stack.tg.topic(forum, "Plans")
    other = tg_stack.tg.group("Elsewhere")
    async with task_book(tg_stack) as book:
        here = await add_task(book, f"tg:{forum.id}", ANN_SENDER, "post the standup notes")
        inside = await add_task(book, f"tg:{forum.id}:{topic}", BOB_SENDER, "water the plants")
        away = await add_task(book, f"tg:{other.id}", ANN_SENDER, "feed the cat")
    shown = await listed(tg_stack, forum, thread_id=topic)
    assert shown.thread_id == topic  # answered where it was asked
    assert "post the standup notes" in shown.text and "water the plants" in shown.text
    assert "feed the cat" not in shown.text
    assert f"#{here.id} (every 2 hours, next " in shown.text
    assert buttons(shown) == {
        f"Cancel #{here.id}": f"task:cancel:{here.id}",
        f"Cancel #{inside.id}": f"task:cancel:{inside.id}",
    }
    elsewhere = await listed(tg_stack, other, BOB)
    assert "feed the cat" in elsewhere.text and buttons(elsewhere) == {
        f"Cancel #{away.id}": f"task:cancel:{away.id}"
    }


async def test_a_chat_without_tasks_is_told_how_to_make_one(tg_stack: TelegramStack) -> None:
    shown = await listed(tg_stack, tg_stack.tg.private_chat(ANN))
    assert shown.text == EMPTY and "remind me in 20 minutes" in shown.text
    assert shown.reply_markup is None
    assert "tasks" in [c["command"] for c in tg_stack.tg.commands]


async def test_the_creator_cancels_and_the_list_shows_it(tg_stack: TelegramStack) -> None:
    group = tg_stack.tg.group("Ops")
    async with task_book(tg_stack) as book:
        first = await add_task(book, f"tg:{group.id}", ANN_SENDER, "check the backups")
        second = await add_task(book, f"tg:{group.id}", ANN_SENDER, "rotate the logs")
        shown = await listed(tg_stack, group)
        text = await press(tg_stack, group, ANN, shown.message_id, f"task:cancel:{first.id}")
        assert text == f"Cancelled task {first.id}."
        assert await status_of(book, first.id) == "cancelled"
        assert await status_of(book, second.id) == "active"
        await tg_stack.tg.wait_for(lambda: current(tg_stack, group, shown.message_id).edits > 0)
        edited = current(tg_stack, group, shown.message_id)
        assert f"#{first.id} cancelled by Ann (@ann): check the backups" in edited.text
        assert f"#{second.id} (every 2 hours" in edited.text
        assert buttons(edited) == {f"Cancel #{second.id}": f"task:cancel:{second.id}"}
        again = await press(tg_stack, group, ANN, shown.message_id, f"task:cancel:{first.id}")
        assert again == f"Task {first.id} has already ended."


@pytest.mark.parametrize("tg_stack", [{"PARLEY_ADMINS": f"tg:{ADMIN.id}"}], indirect=True)
async def test_another_person_is_refused_and_an_admin_may_cancel(tg_stack: TelegramStack) -> None:
    group = tg_stack.tg.group("Ops")
    async with task_book(tg_stack) as book:
        task = await add_task(book, f"tg:{group.id}", ANN_SENDER, "check the backups")
        shown = await listed(tg_stack, group, BOB)
        data = f"task:cancel:{task.id}"
        refused = await press(tg_stack, group, BOB, shown.message_id, data)
        assert refused == f"Only Ann (@ann), who made task {task.id}, or an admin may cancel it."
        assert await status_of(book, task.id) == "active"
        assert current(tg_stack, group, shown.message_id).edits == 0
        assert await press(tg_stack, group, ADMIN, shown.message_id, data) == (
            f"Cancelled task {task.id}."
        )
        assert await status_of(book, task.id) == "cancelled"
        ended = await book.get(task.id)
        assert ended is not None and ended.ended_by == f"tg:{ADMIN.id}"
        await tg_stack.tg.wait_for(lambda: current(tg_stack, group, shown.message_id).edits > 0)
        assert current(tg_stack, group, shown.message_id).reply_markup is None


async def test_unknown_foreign_and_malformed_presses_are_answered(
    tg_stack: TelegramStack,
) -> None:
    group, other = tg_stack.tg.group("Ops"), tg_stack.tg.group("Elsewhere")
    async with task_book(tg_stack) as book:
        mine = await add_task(book, f"tg:{group.id}", ANN_SENDER, "check the backups")
        away = await add_task(book, f"tg:{other.id}", ANN_SENDER, "feed the cat")
        shown = await listed(tg_stack, group)
        message = shown.message_id
        assert await press(tg_stack, group, ANN, message, "task:cancel:999999") == (
            "There is no task 999999 in this chat."
        )
        assert await press(tg_stack, group, ANN, message, f"task:cancel:{away.id}") == (
            f"There is no task {away.id} in this chat."
        )
        for data in ("task:cancel:", "task:cancel:x1", "task:cancel:٣", "task:cancel:01", "task:"):
            assert await press(tg_stack, group, ANN, message, data) == MALFORMED, data
        assert await status_of(book, away.id) == "active"
        assert await status_of(book, mine.id) == "active"
        assert current(tg_stack, group, message).edits == 0


@pytest.mark.parametrize("tg_stack", [{"PARLEY_ADMINS": f"tg:{ADMIN.id}"}], indirect=True)
async def test_a_configured_task_is_listed_without_a_button_and_cannot_be_cancelled(
    tg_stack: TelegramStack,
) -> None:
    group = tg_stack.tg.group("Ops")
    config = Sender(id=CONFIG_CREATOR, name="the configuration")
    async with task_book(tg_stack) as book:
        task = await add_task(book, f"tg:{group.id}", config, "daily digest", name="digest")
        shown = await listed(tg_stack, group, ADMIN)
        assert f"#{task.id} (every 2 hours" in shown.text
        assert "daily digest (set in the configuration)" in shown.text
        assert shown.reply_markup is None
        forged = await press(tg_stack, group, ADMIN, shown.message_id, f"task:cancel:{task.id}")
        assert forged == (
            f"Task {task.id} is set in the configuration; only an operator can remove it there."
        )
        assert await status_of(book, task.id) == "active"


@pytest.mark.parametrize("tg_stack", [{"PARLEY_ALLOWED_USERS": f"tg:{ANN.id}"}], indirect=True)
async def test_a_stranger_is_refused_the_list(tg_stack: TelegramStack) -> None:
    chat = tg_stack.tg.private_chat(BOB)
    async with task_book(tg_stack) as book:
        await add_task(book, f"tg:{chat.id}", BOB_SENDER, "secret plans")
    shown = await listed(tg_stack, chat, BOB)
    assert "private" in shown.text and "secret plans" not in shown.text
