"""What every platform's approval prompts say: the arguments shown, and the line that
replaces the buttons once a request is decided (the answers to presses: `decisions.py`)."""

from __future__ import annotations

import json
from typing import Any


def arguments_json(arguments: dict[str, Any], limit: int) -> str:
    """The exact arguments as indented JSON, cut only past `limit` characters."""
    shown = json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=True)
    if len(shown) > limit:
        shown = shown[:limit] + f"\n… ({len(shown) - limit} more characters)"
    return shown


def outcome_line(status: str, by: str, where: str = "chat") -> str:
    """What the prompt says once it is decided; `where`: "chat", "thread"..."""
    lines = {
        "approved": f"✅ Approved by {by}",
        "remembered": f"✅ Approved by {by}, and allowed in this {where} from now on",
        "denied": f"❌ Denied by {by}",
        "expired": "⌛ Expired: nobody decided in time, so it was not run.",
        "declined": "↩️ Not run: a new message came instead of a decision.",
    }
    return lines.get(status, f"Decided: {status}")
