"""What every platform's approval prompts say: the arguments shown, the answers to presses,
and the line that replaces the buttons once a request is settled."""

from __future__ import annotations

import json
from typing import Any

from bot.confirmations import Confirmation, Status
from bot.envelope import Envelope, Sender

FORBIDDEN = "Only the person who asked, or an admin, can decide this."
ANSWERS = {
    "expired": "This request has expired; nothing was run.",
    "approved": "This was already approved.",
    "denied": "This was already denied.",
    "declined": "A newer message replaced this request; nothing was run.",
    "unknown": "This request is no longer available.",
}


def arguments_json(arguments: dict[str, Any], limit: int) -> str:
    """The exact arguments as indented JSON, cut only past `limit` characters."""
    shown = json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=True)
    if len(shown) > limit:
        shown = shown[:limit] + f"\n… ({len(shown) - limit} more characters)"
    return shown


def outcome_line(status: str, by: str, where: str = "chat") -> str:
    """What the prompt says once it is settled; `where`: "chat", "thread"..."""
    lines = {
        "approved": f"✅ Approved by {by}",
        "remembered": f"✅ Approved by {by}, and allowed in this {where} from now on",
        "denied": f"❌ Denied by {by}",
        "expired": "⌛ Expired: nobody decided in time, so it was not run.",
        "declined": "↩️ Not run: a new message came instead of a decision.",
    }
    return lines.get(status, f"Decided: {status}")


def already(status: str, outcome: str) -> str:
    """The answer to a press that came after the request was settled (or is unknown)."""
    return ANSWERS.get(status) or ANSWERS.get(outcome) or f"Already {status}."


def decision(
    record: Confirmation, person: Sender, choice: str, status: Status, platform: str
) -> Envelope:
    """The decision for the session's mailbox; its id is the dedup key, so a press delivered
    twice, or queued again after a failure, resumes the turn once."""
    return Envelope(
        id=f"decision:{record.id}",
        session=record.session,
        kind="decision",
        sender=person,
        platform=platform,
        confirmation_id=record.id,
        approve=status == "approved",
        remember=choice == "remember",
        reply_to=record.reply_to,
    )
