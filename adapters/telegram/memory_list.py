"""`/memory` in Telegram: what the bot remembers here in one message, a Forget button each;
`/memory search WORDS`, those the words are about, found by meaning; `/forget N`; `/memory
digest on|off` (`adapters.chat.digest_commands`).

In a private chat that is the person's own memories, and only they see the chat; in a group
it is the group's, which everyone in it shares, so the list may be posted there. The text is
sent without a parse mode, so a memory holding `<`, `*` or `_` shows as it was written.

A press is answered at once (the callback query's text, an alert for a press that changed
nothing) and the list is edited: the memory's line says it was forgotten and its button goes,
the others stay. Whose memories a pressed list holds comes from the chat it is in (a private
chat's id is its person's), never from the presser. What is said is shared with Slack
(`adapters.chat.memory_list`).
"""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, Chat
from aiogram.types import Message as TgMessage

from adapters.chat import digest_commands, item_list, memory_list
from adapters.places.telegram import chat_key, person
from adapters.telegram.deps import IngressDeps
from adapters.telegram.filters import data_starts
from adapters.telegram.item_list import answer, keyboard, replace_item
from adapters.telegram.place import place_of, sender_of
from bot.memory.scope import scope_of

PREFIX = "mem:"


def router() -> Router:
    """A fresh router each time: a router belongs to one dispatcher. Every press whose data
    starts with `mem:` is answered here, a malformed one included."""
    memories = Router(name="memories")
    memories.message.register(on_memory, Command("memory"))
    memories.message.register(on_forget, Command("forget"))
    memories.callback_query.register(on_press, data_starts(PREFIX))
    return memories


def scope_in(chat: Chat) -> str:
    """The memories a list in `chat` holds: in a private chat, its person's (a private
    chat's id is its person's), never the presser's."""
    kind = "private" if chat.type == "private" else "group"
    return scope_of(kind, person(chat.id), chat_key(chat.id))


async def on_memory(message: TgMessage, command: CommandObject, deps: IngressDeps) -> None:
    if message.from_user is None or not await deps.admit(message, message.from_user):
        return
    place = place_of(message)
    scope = scope_of(place.kind, person(message.from_user.id), place.session)
    if (switch := digest_commands.asked_digest(command.args or "")) is not None:
        who = person(message.from_user.id)
        may_change = place.private or deps.gate.is_admin(who)
        said = await digest_commands.switched(
            deps.recall, deps.settings, scope, switch, may_change=may_change, by=who
        )
        await deps.answer(message, said)
        return
    try:
        words = memory_list.asked_for(command.args or "")
    except ValueError as usage:
        await deps.answer(message, str(usage))
        return
    if words is None:
        shown = await memory_list.listing(deps.recall.memories, scope) or memory_list.EMPTY
    else:
        shown = await memory_list.found(deps.recall, scope, words)
    if isinstance(shown, str):
        await deps.answer(message, shown)
        return
    buttons = keyboard(shown.buttons, memory_list.button_label, memory_list.BUTTONS)
    await deps.answer(message, shown.text, buttons)


async def on_forget(message: TgMessage, command: CommandObject, deps: IngressDeps) -> None:
    user = message.from_user
    if user is None or not await deps.admit(message, user):
        return
    place = place_of(message)
    scope = scope_of(place.kind, person(user.id), place.session)
    said = await memory_list.forget_numbered(
        deps.recall.memories, deps.gate, scope, command.args or "", sender_of(user, deps.settings)
    )
    await deps.answer(message, said)


async def on_press(query: CallbackQuery, deps: IngressDeps) -> None:
    message = query.message
    if not isinstance(message, TgMessage):  # an inline or inaccessible message: no list
        await answer(deps, query, memory_list.MALFORMED, alert=True)
        return
    presser = sender_of(query.from_user, deps.settings)
    memory_id = memory_list.BUTTONS.parse(query.data)
    lines = (message.text or "").split("\n")
    said = await memory_list.forget(
        deps.recall.memories,
        deps.gate,
        scope_in(message.chat),
        memory_id,
        presser,
        listed_here=memory_id is not None and item_list.shows(lines[1:], memory_id),
    )
    await answer(deps, query, said.text, alert=said.alert)
    if said.memory_id is not None and said.line is not None:
        pressed = memory_list.BUTTONS.payload(said.memory_id)
        await replace_item(deps, message, said.memory_id, said.line, pressed)
