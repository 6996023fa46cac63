"""How Telegram shows the lists of `adapters.chat.item_list` (`/tasks`, `/memory`,
`/permissions`): one message, a button per item, one per row; a press answered at once (an
alert for a press that changed nothing); the list edited afterwards, the pressed item's line
replaced and its button gone, the others left as they are. Sent without a parse mode, so
what people wrote shows as written."""

from __future__ import annotations

from collections.abc import Callable

from aiogram.methods import AnswerCallbackQuery, EditMessageText
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup
from aiogram.types import Message as TgMessage

from adapters.chat import item_list
from adapters.telegram.deps import IngressDeps


def keyboard(
    items: list[int], label: Callable[[int], str], data: item_list.ItemButtons
) -> InlineKeyboardMarkup | None:
    """A button per item, one per row; None for none."""
    rows = [
        [InlineKeyboardButton(text=label(item), callback_data=data.payload(item))] for item in items
    ]
    return InlineKeyboardMarkup(inline_keyboard=rows) if rows else None


async def answer(deps: IngressDeps, query: CallbackQuery, text: str, alert: bool) -> None:
    await deps.calls.quietly(
        AnswerCallbackQuery(callback_query_id=query.id, text=text, show_alert=alert)
    )


async def replace_item(
    deps: IngressDeps, message: TgMessage, item: int, line: str, pressed: str
) -> None:
    """The list in `message` with `item`'s line replaced by `line` and the button carrying
    `pressed` gone; nothing is sent when it shows that already (a second press)."""
    if not message.text:
        return
    lines = message.text.split("\n")
    shown = item_list.replace_line(lines, item, line)
    rows = (message.reply_markup.inline_keyboard if message.reply_markup else []) or []
    kept = [row for row in ([b for b in r if b.callback_data != pressed] for r in rows) if row]
    if shown == lines and kept == rows:
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
