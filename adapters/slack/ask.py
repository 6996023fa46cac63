"""`ask_user`'s prompts in Slack: the questions in Block Kit, the open one's options as buttons.

A button's value is only `{id}:{question}:{option}` (`x` for "other"), parsed strictly; the
questions stay in the confirmation in Redis, and the prompt is drawn again from it whenever it
changes (a press, a typed answer, the expiry). The model's words are escaped as mrkdwn.
"""

from __future__ import annotations

import re
from typing import Any

from adapters.chat.questions import current, footer, question_lines
from adapters.slack.confirm import literal
from bot.redis.confirmations import Confirmation

ACTION = re.compile(r"^parley_answer_(?:[0-9]|other)$")
ACTIONS_BLOCK = "parley_ask"
VALUE = re.compile(r"^([A-Za-z0-9_-]{1,32}):([0-9]):([0-9]|x)$")
OTHER = "✏️ Other: type your answer"


def parse(action_id: str, value: str) -> tuple[str, int, int | None] | None:
    """(confirmation id, question, option or None for "other") from a button, or None if
    its action and value do not agree."""
    match = VALUE.match(value)
    if match is None or not ACTION.match(action_id):
        return None
    option = None if match[3] == "x" else int(match[3])
    if action_id != f"parley_answer_{'other' if option is None else option}":
        return None
    return match[1], int(match[2]), option


def summary(confirmation: Confirmation) -> str:
    """The notification text, for clients that cannot show blocks."""
    return "❓ " + " / ".join(literal(q.question) for q in confirmation.questions)


def blocks(confirmation: Confirmation, by: str = "") -> list[dict[str, Any]]:
    """Each question with its answer so far, how to answer (or how it ended), and the
    open question's options."""
    shown: list[dict[str, Any]] = []
    for line, answer in question_lines(confirmation):
        text = f"*{literal(line)}*"
        if answer is not None:
            text += f"\n→ {literal(answer)}"
        shown.append({"type": "section", "text": {"type": "mrkdwn", "text": text}})
    ending = footer(confirmation, by) if by else literal(footer(confirmation))
    if confirmation.status == "pending":
        shown.append({"type": "context", "elements": [{"type": "mrkdwn", "text": ending}]})
    else:
        shown.append({"type": "section", "text": {"type": "mrkdwn", "text": ending}})
    index = current(confirmation)
    if index is not None:
        prefix = f"{confirmation.id}:{index}"
        options = confirmation.questions[index].options
        buttons = [_button(o, f"parley_answer_{n}", f"{prefix}:{n}") for n, o in enumerate(options)]
        buttons.append(_button(OTHER, "parley_answer_other", f"{prefix}:x"))
        shown.append({"type": "actions", "block_id": ACTIONS_BLOCK, "elements": buttons})
    return shown


def _button(text: str, action_id: str, value: str) -> dict[str, Any]:
    return {
        "type": "button",
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "action_id": action_id,
        "value": value,
    }
