"""`/permissions` in Telegram: the tools the asker always allows in this chat (an admin: the
tools everyone does), a Revoke button each.

A press is answered at once (an alert for a press that changed nothing) and the list is
edited: the grant's line says it was revoked and its button goes, the others stay. The chat a
pressed list is about is the chat it is in, never anything the button says. What is said is
shared with Slack (`adapters.permission_list`); sent without a parse mode, so a tool's name
shows as it is.
"""

from __future__ import annotations

from aiogram import F, Router
from aiogram.filters import Command
from aiogram.methods import AnswerCallbackQuery, EditMessageText
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup
from aiogram.types import Message as TgMessage

from adapters import permission_list
from adapters.telegram.deps import IngressDeps
from adapters.telegram.place import sender_of

PREFIX = "perm:"


def router() -> Router:
    """A fresh router each time: a router belongs to one dispatcher. Every press whose data
    starts with `perm:` is answered here, a malformed one included."""
    permissions = Router(name="permissions")
    permissions.message.register(on_permissions, Command("permissions"))
    permissions.callback_query.register(on_press, F.data.startswith(PREFIX))
    return permissions


def chat_of(chat_id: int) -> str:
    """The chat's key (`bot.chats.chat_of` of any of its sessions): its topics share it."""
    return f"tg:{chat_id}"


async def on_permissions(message: TgMessage, deps: IngressDeps) -> None:
    if message.from_user is None or not await deps.admit(message, message.from_user):
        return
    viewer = sender_of(message.from_user, deps.settings)
    shown = await permission_list.listing(deps.grants, chat_of(message.chat.id), viewer)
    if shown is None:
        await deps.answer(message, permission_list.EMPTY)
        return
    await deps.answer(message, shown.text, keyboard(shown.buttons))


def keyboard(grant_ids: list[int]) -> InlineKeyboardMarkup:
    rows = [
        [
            InlineKeyboardButton(
                text=permission_list.button_label(grant_id),
                callback_data=permission_list.payload(grant_id),
            )
        ]
        for grant_id in grant_ids
    ]
    return InlineKeyboardMarkup(inline_keyboard=rows)


async def on_press(query: CallbackQuery, deps: IngressDeps) -> None:
    message = query.message
    if not isinstance(message, TgMessage):  # an inline or inaccessible message: no list
        await _answer(deps, query, permission_list.MALFORMED, alert=True)
        return
    grant_id = permission_list.parse_payload(query.data)
    lines = (message.text or "").split("\n")
    listed = grant_id is not None and any(x.startswith(f"#{grant_id} ") for x in lines[1:])
    answer = await permission_list.revoke(
        deps.grants,
        grant_id,
        chat_of(message.chat.id),
        sender_of(query.from_user, deps.settings),
        listed_here=listed,
    )
    await _answer(deps, query, answer.text, alert=answer.alert)
    if answer.grant_id is not None and answer.line is not None:
        await _show_revoked(deps, message, lines, answer.grant_id, answer.line)


async def _answer(deps: IngressDeps, query: CallbackQuery, text: str, alert: bool) -> None:
    await deps.calls.quietly(
        AnswerCallbackQuery(callback_query_id=query.id, text=text, show_alert=alert)
    )


async def _show_revoked(
    deps: IngressDeps, message: TgMessage, lines: list[str], grant_id: int, line: str
) -> None:
    """The list with the grant's line replaced and its button gone (the others stay)."""
    pressed = permission_list.payload(grant_id)
    rows = (message.reply_markup.inline_keyboard if message.reply_markup else []) or []
    kept = [row for row in ([b for b in r if b.callback_data != pressed] for r in rows) if row]
    if kept == rows:  # shown as revoked already: nothing to edit
        return
    await deps.calls.quietly(
        EditMessageText(
            chat_id=message.chat.id,
            message_id=message.message_id,
            text="\n".join(permission_list.replace_line(lines, grant_id, line)),
            reply_markup=InlineKeyboardMarkup(inline_keyboard=kept) if kept else None,
        ),
        message.chat.id,
    )
