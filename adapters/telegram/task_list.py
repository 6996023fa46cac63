"""`/tasks` in Telegram: the chat's scheduled tasks in one message, a Cancel button each.

The list covers the whole chat (`tg:CHAT`), its forum topics included, wherever in it it was
asked. A press is answered at once (the callback query's text, an alert for a press that
changed nothing) and the list is edited: the task's line says it ended and its button goes,
the others stay. What is said is shared with Slack (`adapters.chat.task_list`).
"""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import CallbackQuery
from aiogram.types import Message as TgMessage

from adapters.chat import task_list
from adapters.places.telegram import chat_key
from adapters.telegram.deps import IngressDeps
from adapters.telegram.filters import data_starts
from adapters.telegram.item_list import answer, keyboard, replace_item
from adapters.telegram.place import sender_of

PREFIX = "task:"


def router() -> Router:
    """A fresh router each time: a router belongs to one dispatcher. Every press whose data
    starts with `task:` is answered here, a malformed one included."""
    tasks = Router(name="tasks")
    tasks.message.register(on_tasks, Command("tasks"))
    tasks.callback_query.register(on_press, data_starts(PREFIX))
    return tasks


async def on_tasks(message: TgMessage, deps: IngressDeps) -> None:
    if message.from_user is None or not await deps.admit(message, message.from_user):
        return
    cap = deps.settings.task_tokens_per_day
    shown = await task_list.chat_listing(deps.tasks, chat_key(message.chat.id), cap)
    if shown is None:
        await deps.answer(message, task_list.EMPTY)
        return
    buttons = keyboard(shown.buttons, task_list.button_label, task_list.BUTTONS)
    await deps.answer(message, shown.text, buttons)


async def on_press(query: CallbackQuery, deps: IngressDeps) -> None:
    message = query.message
    if message is None:  # an inline message's button: not one of the lists
        await answer(deps, query, task_list.MALFORMED, alert=True)
        return
    person = sender_of(query.from_user, deps.settings)
    task_id = task_list.BUTTONS.parse(query.data)
    said = await task_list.cancel(deps.tasks, task_id, chat_key(message.chat.id), person)
    await answer(deps, query, said.text, alert=said.alert)
    if said.task_id is not None and said.line is not None and isinstance(message, TgMessage):
        pressed = task_list.BUTTONS.payload(said.task_id)
        await replace_item(deps, message, said.task_id, said.line, pressed)
