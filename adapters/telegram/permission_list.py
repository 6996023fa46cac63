"""`/permissions` in Telegram: the tools the asker always allows in this chat (an admin: the
tools everyone does), a Revoke button each.

A press is answered at once (an alert for a press that changed nothing) and the list is
edited: the grant's line says it was revoked and its button goes, the others stay. The chat a
pressed list is about is the chat it is in, never anything the button says. What is said is
shared with Slack (`adapters.chat.permission_list`); sent without a parse mode, so a tool's name
shows as it is.
"""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import CallbackQuery
from aiogram.types import Message as TgMessage

from adapters.chat import item_list, permission_list
from adapters.places.telegram import chat_key
from adapters.telegram.deps import IngressDeps
from adapters.telegram.filters import data_starts
from adapters.telegram.item_list import answer, keyboard, replace_item
from adapters.telegram.place import sender_of

PREFIX = "perm:"


def router() -> Router:
    """A fresh router each time: a router belongs to one dispatcher. Every press whose data
    starts with `perm:` is answered here, a malformed one included."""
    permissions = Router(name="permissions")
    permissions.message.register(on_permissions, Command("permissions"))
    permissions.callback_query.register(on_press, data_starts(PREFIX))
    return permissions


async def on_permissions(message: TgMessage, deps: IngressDeps) -> None:
    if message.from_user is None or not await deps.admit(message, message.from_user):
        return
    viewer = sender_of(message.from_user, deps.settings)
    shown = await permission_list.listing(deps.grants, chat_key(message.chat.id), viewer)
    if shown is None:
        await deps.answer(message, permission_list.EMPTY)
        return
    buttons = keyboard(shown.buttons, permission_list.button_label, permission_list.BUTTONS)
    await deps.answer(message, shown.text, buttons)


async def on_press(query: CallbackQuery, deps: IngressDeps) -> None:
    message = query.message
    if not isinstance(message, TgMessage):  # an inline or inaccessible message: no list
        await answer(deps, query, permission_list.MALFORMED, alert=True)
        return
    grant_id = permission_list.BUTTONS.parse(query.data)
    lines = (message.text or "").split("\n")
    listed = grant_id is not None and item_list.shows(lines[1:], grant_id)
    said = await permission_list.revoke(
        deps.grants,
        grant_id,
        chat_key(message.chat.id),
        sender_of(query.from_user, deps.settings),
        listed_here=listed,
    )
    await answer(deps, query, said.text, alert=said.alert)
    if said.grant_id is not None and said.line is not None:
        pressed = permission_list.BUTTONS.payload(said.grant_id)
        await replace_item(deps, message, said.grant_id, said.line, pressed)
