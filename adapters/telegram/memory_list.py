"""`/memory` in Telegram: what the bot remembers here in one message, a Forget button each.

In a private chat that is the person's own memories, and only they see the chat; in a group
it is the group's, which everyone in it shares, so the list may be posted there. The text is
sent without a parse mode, so a memory holding `<`, `*` or `_` shows as it was written.

A press is answered at once (the callback query's text, an alert for a press that changed
nothing) and the list is edited: the memory's line says it was forgotten and its button goes,
the others stay. Whose memories a pressed list holds comes from the chat it is in (a private
chat's id is its person's), never from the presser. What is said is shared with Slack
(`adapters.memory_list`).
"""

from __future__ import annotations

from aiogram import F, Router
from aiogram.filters import Command
from aiogram.methods import AnswerCallbackQuery, EditMessageText
from aiogram.types import CallbackQuery, Chat, InlineKeyboardButton, InlineKeyboardMarkup
from aiogram.types import Message as TgMessage

from adapters import memory_list
from adapters.telegram.deps import IngressDeps
from adapters.telegram.place import place_of, sender_of
from bot.memory.scope import scope_of

PREFIX = "mem:"


def router() -> Router:
    """A fresh router each time: a router belongs to one dispatcher. Every press whose data
    starts with `mem:` is answered here, a malformed one included."""
    memories = Router(name="memories")
    memories.message.register(on_memory, Command("memory"))
    memories.callback_query.register(on_press, F.data.startswith(PREFIX))
    return memories


def scope_in(chat: Chat, person: str) -> str:
    """The memories a list in `chat` holds: in a private chat, `person`'s."""
    kind = "private" if chat.type == "private" else "group"
    return scope_of(kind, person, f"tg:{chat.id}")


async def on_memory(message: TgMessage, deps: IngressDeps) -> None:
    if message.from_user is None or not await deps.admit(message, message.from_user):
        return
    place = place_of(message)
    scope = scope_of(place.kind, f"tg:{message.from_user.id}", place.session)
    shown = await memory_list.listing(deps.memories, scope)
    if shown is None:
        await deps.answer(message, memory_list.EMPTY)
        return
    await deps.answer(message, shown.text, keyboard(shown.buttons))


def keyboard(memory_ids: list[int]) -> InlineKeyboardMarkup:
    """A Forget button per memory, one per row."""
    rows = [
        [
            InlineKeyboardButton(
                text=memory_list.button_label(memory_id),
                callback_data=memory_list.payload(memory_id),
            )
        ]
        for memory_id in memory_ids
    ]
    return InlineKeyboardMarkup(inline_keyboard=rows)


async def on_press(query: CallbackQuery, deps: IngressDeps) -> None:
    message = query.message
    if not isinstance(message, TgMessage):  # an inline or inaccessible message: no list
        await _answer(deps, query, memory_list.MALFORMED, alert=True)
        return
    presser = sender_of(query.from_user, deps.settings)
    memory_id = memory_list.parse_payload(query.data)
    lines = (message.text or "").split("\n")
    answer = await memory_list.forget(
        deps.memories,
        deps.gate,
        scope_in(message.chat, f"tg:{message.chat.id}"),
        memory_id,
        presser,
        listed_here=memory_id is not None and memory_list.shows(lines[1:], memory_id),
    )
    await _answer(deps, query, answer.text, alert=answer.alert)
    if answer.memory_id is not None and answer.line is not None:
        await _show_forgotten(deps, message, lines, answer.memory_id, answer.line)


async def _answer(deps: IngressDeps, query: CallbackQuery, text: str, alert: bool) -> None:
    await deps.calls.quietly(
        AnswerCallbackQuery(callback_query_id=query.id, text=text, show_alert=alert)
    )


async def _show_forgotten(
    deps: IngressDeps, message: TgMessage, lines: list[str], memory_id: int, line: str
) -> None:
    """The list with the memory's line replaced and its button gone (the others stay)."""
    shown = memory_list.replace_line(lines, memory_id, line)
    pressed = memory_list.payload(memory_id)
    rows = (message.reply_markup.inline_keyboard if message.reply_markup else []) or []
    kept = [[b for b in row if b.callback_data != pressed] for row in rows]
    kept = [row for row in kept if row]
    if shown == lines and kept == rows:  # already shown as forgotten: nothing to edit
        return
    await deps.calls.quietly(
        EditMessageText(
            chat_id=message.chat.id,
            message_id=message.message_id,
            text="\n".join(shown),
            reply_markup=InlineKeyboardMarkup(inline_keyboard=kept) if kept else None,
        ),
        message.chat.id,
    )
