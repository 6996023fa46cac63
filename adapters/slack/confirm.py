"""Approval prompts in Slack: Block Kit with the tool, its exact arguments, and the buttons.

A button's value is only the confirmation id; the calls and their arguments stay in the
confirmation record in Redis. Once decided or expired, the buttons are replaced by a line
saying what happened and who decided.

The prompt is Slack mrkdwn, where `&`, `<` and `>` are control characters (`<!channel>`
notifies everyone, `<url|x>` is a link): the tool's name and arguments escape them, so they
show exactly as the model wrote them and never act as markup.
"""

from __future__ import annotations

import sys
from typing import Any

from adapters.chat.approvals import arguments_json, helper_line, outcome_line, shown_arguments
from adapters.chat.decisions import Choice
from bot.vocabulary.events import PendingCall

ACTIONS: dict[str, Choice] = {
    "parley_approve": "approve",
    "parley_deny": "deny",
    "parley_remember": "remember",
}
ACTIONS_BLOCK = "parley_confirm"
OUTCOME_BLOCK = "parley_outcome"
ARGS_LIMIT = 2_500  # a section holds 3,000 characters
MAX_CALL_BLOCKS = 45  # of the 50 blocks a message may have; the rest: note, context, buttons
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def summary(calls: list[PendingCall]) -> str:
    """The notification text: what the prompt is about, for clients that cannot show blocks."""
    names = ", ".join(dict.fromkeys(literal(call.name) for call in calls))
    return f"🔐 Allow {names}?"


def literal(text: str) -> str:
    """`text` as mrkdwn that shows it as is (Slack's own escapes)."""
    return "".join(_ESCAPES.get(char, char) for char in text)


def _json(arguments: dict[str, Any]) -> str:
    """The exact arguments, escaped, cut where the escaped text would pass `ARGS_LIMIT`
    (never inside an escape)."""
    full = arguments_json(arguments, sys.maxsize)
    size = 0
    for index, char in enumerate(full):
        size += len(_ESCAPES.get(char, char))
        if size > ARGS_LIMIT:
            return literal(full[:index]) + f"\n… ({len(full) - index} more characters)"
    return literal(full)


def _call_blocks(call: PendingCall) -> list[dict[str, Any]]:
    """The call's name and arguments as JSON in a section; an argument shown as text (a
    program) in a preformatted rich text block, which Slack shows exactly as it is: no
    escapes, and a "```" inside cannot end the block early."""
    shown = shown_arguments(call.arguments, ARGS_LIMIT)
    texts = [block for block in shown if block.label is not None]
    head = f"`{literal(call.name)}`"
    if len(texts) < len(shown):
        labels = {block.label for block in texts}
        rest = {key: value for key, value in call.arguments.items() if key not in labels}
        head += f"\n```\n{_json(rest)}\n```"
    return [_section(head), *(_preformatted(f"{b.label}:", b.text) for b in texts)]


def prompt(
    calls: list[PendingCall],
    expires_in: float,
    confirmation_id: str,
    *,
    can_remember: bool,
    requester: str,
    helper: str | None = None,
) -> list[dict[str, Any]]:
    """The prompt's blocks; `helper`: the task of the helper whose calls these are."""
    blocks: list[dict[str, Any]] = [_section(f"*{summary(calls)}*")]
    if helper:
        blocks.append(_section(literal(helper_line(helper))))
    for index, call in enumerate(calls):
        more = _call_blocks(call)
        if len(blocks) + len(more) > MAX_CALL_BLOCKS:
            blocks.append(_section(f"… and {len(calls) - index} more calls, not shown here."))
            break
        blocks += more
    buttons = [
        _button("✅ Approve", "parley_approve", confirmation_id, "primary"),
        _button("❌ Deny", "parley_deny", confirmation_id, "danger"),
    ]
    if can_remember:
        buttons.append(
            _button("Always allow in this conversation", "parley_remember", confirmation_id)
        )
    minutes = max(1, round(expires_in / 60))
    asked = f"Asked by <@{requester}>. " if requester else ""
    blocks.append(_context(f"{asked}This request expires in {minutes} min."))
    blocks.append({"type": "actions", "block_id": ACTIONS_BLOCK, "elements": buttons})
    return blocks


def with_outcome(blocks: list[dict[str, Any]], status: str, by: str = "") -> list[dict[str, Any]]:
    """The prompt without its buttons and expiry line, ending with the outcome."""
    kept = [
        block
        for block in blocks
        if block.get("type") not in ("actions", "context")
        and block.get("block_id") != OUTCOME_BLOCK
    ]
    return [*kept, {**_section(outcome(status, by)), "block_id": OUTCOME_BLOCK}]


def outcome(status: str, by: str = "") -> str:
    return outcome_line(status, by, where="conversation")


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _preformatted(label: str, text: str) -> dict[str, Any]:
    return {
        "type": "rich_text",
        "elements": [
            {"type": "rich_text_section", "elements": [{"type": "text", "text": label}]},
            {"type": "rich_text_preformatted", "elements": [{"type": "text", "text": text}]},
        ],
    }


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def _button(text: str, action_id: str, value: str, style: str | None = None) -> dict[str, Any]:
    button: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": text, "emoji": True},
        "action_id": action_id,
        "value": value,
    }
    if style is not None:
        button["style"] = style
    return button
