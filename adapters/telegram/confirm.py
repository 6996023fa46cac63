"""Approval prompts in Telegram: the message, its buttons, and what it says once decided.

Buttons carry only `cf:{id}:{choice}` (well inside the 64 bytes Telegram allows); the calls
and their arguments stay in the confirmation record in Redis. The arguments are shown
exactly in code blocks (a program as the program, the rest as JSON), cut only when they
would not fit the message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from adapters.chat.approvals import helper_line, outcome_line, shown_arguments
from adapters.chat.decisions import Choice
from adapters.telegram.render import utf16_len
from bot.vocabulary.events import PendingCall

CALLBACK = re.compile(r"^cf:([A-Za-z0-9_-]{1,32}):([ydr])$")
ARGS_LIMIT = 3_500  # what the calls of one prompt may show, within a message's 4,096
CHOICES: dict[str, Choice] = {"y": "approve", "d": "deny", "r": "remember"}


@dataclass(frozen=True)
class Prompt:
    text: str
    entities: list[dict[str, Any]]


def parse(data: str | None) -> tuple[str, Choice] | None:
    """(confirmation id, choice) from a button's callback data, or None if it is not ours."""
    match = CALLBACK.match(data or "")
    return (match[1], CHOICES[match[2]]) if match else None


def keyboard(confirmation_id: str, *, can_remember: bool) -> InlineKeyboardMarkup:
    row = [
        InlineKeyboardButton(text="✅ Approve", callback_data=f"cf:{confirmation_id}:y"),
        InlineKeyboardButton(text="❌ Deny", callback_data=f"cf:{confirmation_id}:d"),
    ]
    rows = [row]
    if can_remember:
        rows.append(
            [
                InlineKeyboardButton(
                    text="Always allow in this chat", callback_data=f"cf:{confirmation_id}:r"
                )
            ]
        )
    return InlineKeyboardMarkup(inline_keyboard=rows)


def prompt(calls: list[PendingCall], expires_in: float, helper: str | None = None) -> Prompt:
    """ "🔐 Allow calculator?" with each call's arguments in a code block; `helper`: the
    task of the helper whose calls these are."""
    names = ", ".join(dict.fromkeys(call.name for call in calls))
    text = f"🔐 Allow {names}?\n"
    entities: list[dict[str, Any]] = [{"type": "bold", "offset": 0, "length": utf16_len(text) - 1}]
    if helper:
        text += helper_line(helper) + "\n"
    share = max(200, ARGS_LIMIT // len(calls))
    for call in calls:
        if len(calls) > 1:
            text += f"\n{call.name}:"
        for block in shown_arguments(call.arguments, share):
            text += f"\n{block.label}:\n" if block.label else "\n"
            entity = {"type": "pre", "offset": utf16_len(text), "length": utf16_len(block.text)}
            if block.language:
                entity["language"] = block.language
            entities.append(entity)
            text += block.text + "\n"
    minutes = max(1, round(expires_in / 60))
    text += f"\nThis request expires in {minutes} min."
    return Prompt(text, entities)


def with_outcome(previous: Prompt, status: str, by: str = "") -> Prompt:
    """The prompt with its last line replaced by the outcome (entities before it kept)."""
    head, _, _ = previous.text.rpartition("\n")
    text = f"{head}\n{outcome_line(status, by)}" if head else outcome_line(status, by)
    limit = utf16_len(head)
    entities = [e for e in previous.entities if e["offset"] + e["length"] <= limit]
    return Prompt(text, entities)
