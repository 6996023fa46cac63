"""`ask_user`'s prompts in Telegram: the questions, the open one's options as buttons.

A button carries only `aq:{id}:{question}:{option}` (`x` for "other"), within the 64 bytes
Telegram allows and parsed strictly; the questions stay in the confirmation in Redis, and
the prompt is drawn again from it whenever it changes (a press, a typed answer, the expiry).
"""

from __future__ import annotations

import re

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from adapters.chat.questions import current, footer, question_lines
from bot.redis.confirmations import Confirmation

CALLBACK = re.compile(r"^aq:([A-Za-z0-9_-]{1,32}):([0-9]):([0-9]|x)$")
OTHER = "✏️ Other: type your answer"


def parse(data: str | None) -> tuple[str, int, int | None] | None:
    """(confirmation id, question, option or None for "other") from a button's data, or
    None if it is not one of these buttons."""
    match = CALLBACK.match(data or "")
    if match is None:
        return None
    return match[1], int(match[2]), None if match[3] == "x" else int(match[3])


def text(confirmation: Confirmation, by: str = "") -> str:
    """The prompt: each question with its answer so far, then how to answer or how it
    ended."""
    parts = []
    for line, answer in question_lines(confirmation):
        parts.append(f"{line}\n→ {answer}" if answer is not None else line)
    return "\n\n".join([*parts, footer(confirmation, by)])


def keyboard(confirmation: Confirmation) -> InlineKeyboardMarkup | None:
    """The open question's options, one a row, and "other"; None once none is open."""
    index = current(confirmation)
    if index is None:
        return None
    prefix = f"aq:{confirmation.id}:{index}"
    options = confirmation.questions[index].options
    rows = [
        [InlineKeyboardButton(text=option, callback_data=f"{prefix}:{number}")]
        for number, option in enumerate(options)
    ]
    rows.append([InlineKeyboardButton(text=OTHER, callback_data=f"{prefix}:x")])
    return InlineKeyboardMarkup(inline_keyboard=rows)
