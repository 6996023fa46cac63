"""`/tasks` in Telegram: the chat's scheduled tasks in one message, a Cancel button each.

The list covers the whole chat (`tg:CHAT`), its forum topics included, wherever in it it was
asked. A press is answered at once (the callback query's text, an alert for a press that
changed nothing) and the list is edited: the task's line says it ended and its button goes,
the others stay. What is said is shared with Slack (`adapters.task_list`).
"""

from __future__ import annotations

from aiogram import F, Router
from aiogram.filters import Command
from aiogram.methods import AnswerCallbackQuery, EditMessageText
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup
from aiogram.types import Message as TgMessage

from adapters import task_list
from adapters.telegram.deps import IngressDeps
from adapters.telegram.place import sender_of

PREFIX = "task:"


def router() -> Router:
    """A fresh router each time: a router belongs to one dispatcher. Every press whose data
    starts with `task:` is answered here, a malformed one included."""
    tasks = Router(name="tasks")
    tasks.message.register(on_tasks, Command("tasks"))
    tasks.callback_query.register(on_press, F.data.startswith(PREFIX))
    return tasks


def chat_of(chat_id: int) -> str:
    """The chat's session key, under which its topics' sessions are."""
    return f"tg:{chat_id}"


async def on_tasks(message: TgMessage, deps: IngressDeps) -> None:
    if message.from_user is None or not await deps.admit(message, message.from_user):
        return
    shown = task_list.listing(await deps.tasks.in_chat(chat_of(message.chat.id)))
    if shown is None:
        await deps.answer(message, task_list.EMPTY)
        return
    await deps.answer(message, shown.text, keyboard(shown.buttons))


def keyboard(task_ids: list[int]) -> InlineKeyboardMarkup | None:
    """A Cancel button per task, one per row; None when no task has one."""
    rows = [
        [
            InlineKeyboardButton(
                text=task_list.button_label(task_id), callback_data=task_list.payload(task_id)
            )
        ]
        for task_id in task_ids
    ]
    return InlineKeyboardMarkup(inline_keyboard=rows) if rows else None


async def on_press(query: CallbackQuery, deps: IngressDeps) -> None:
    message = query.message
    if message is None:  # an inline message's button: not one of the lists
        await _answer(deps, query, task_list.MALFORMED, alert=True)
        return
    person = sender_of(query.from_user, deps.settings)
    task_id = task_list.parse_payload(query.data)
    answer = await task_list.cancel(deps.tasks, task_id, chat_of(message.chat.id), person)
    await _answer(deps, query, answer.text, alert=answer.alert)
    if answer.task_id is not None and answer.line is not None and isinstance(message, TgMessage):
        await _show_ended(deps, message, answer.task_id, answer.line)


async def _answer(deps: IngressDeps, query: CallbackQuery, text: str, alert: bool) -> None:
    await deps.calls.quietly(
        AnswerCallbackQuery(callback_query_id=query.id, text=text, show_alert=alert)
    )


async def _show_ended(deps: IngressDeps, message: TgMessage, task_id: int, line: str) -> None:
    """The list with the task's line replaced and its button gone (the others stay)."""
    if not message.text:
        return
    lines = task_list.replace_line(message.text.split("\n"), task_id, line)
    pressed = task_list.payload(task_id)
    rows = (message.reply_markup.inline_keyboard if message.reply_markup else []) or []
    kept = [[b for b in row if b.callback_data != pressed] for row in rows]
    kept = [row for row in kept if row]
    await deps.calls.quietly(
        EditMessageText(
            chat_id=message.chat.id,
            message_id=message.message_id,
            text="\n".join(lines),
            reply_markup=InlineKeyboardMarkup(inline_keyboard=kept) if kept else None,
        ),
        message.chat.id,
    )
