"""What every platform's approval prompts say: the arguments shown, and the line that
replaces the buttons once a request is decided (the answers to presses: `decisions.py`). The
web chat's card shows the same blocks, which the HTTP egress puts in the request's event."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# Arguments always shown as text of their own, with the language a client may highlight.
TEXT_ARGUMENTS = {"code": "python"}


@dataclass(frozen=True)
class Shown:
    """One block of a prompt: `label` names the argument shown as text in it, or is None for
    the JSON of the others; `language` is a hint for highlighting ("json", "python", "")."""

    label: str | None
    text: str
    language: str


def arguments_json(arguments: dict[str, Any], limit: int) -> str:
    """The exact arguments as indented JSON, cut only past `limit` characters."""
    return cut(json.dumps(arguments, indent=2, ensure_ascii=False, sort_keys=True), limit)


def cut(text: str, limit: int) -> str:
    if len(text) > limit:
        return text[:limit] + f"\n… ({len(text) - limit} more characters)"
    return text


def shown_arguments(arguments: dict[str, Any], limit: int) -> list[Shown]:
    """The arguments as a person must see them to decide: a program or a file's content as
    the text it is, in a block of its own (JSON would show it as one line full of `\\n`),
    and the other arguments as JSON. The blocks share `limit` characters."""
    texts = {
        key: value
        for key, value in sorted(arguments.items())
        if isinstance(value, str) and ("\n" in value or key in TEXT_ARGUMENTS)
    }
    rest = {key: value for key, value in arguments.items() if key not in texts}
    share = limit // (len(texts) + (1 if rest or not texts else 0))
    shown = [Shown(None, arguments_json(rest, share), "json")] if rest or not texts else []
    for key, value in texts.items():
        shown.append(Shown(key, cut(value, share), TEXT_ARGUMENTS.get(key, "")))
    return shown


def helper_line(task: str) -> str:
    """What a prompt says of the helper that asks (its parent's chat shows the prompt)."""
    return f"🤖 Asked by a helper working on: {task}"


def outcome_line(status: str, by: str, where: str = "chat") -> str:
    """What the prompt says once it is decided; `where`: "chat", "thread"..."""
    lines = {
        "approved": f"✅ Approved by {by}",
        "remembered": f"✅ Approved by {by}, and allowed in this {where} from now on",
        "denied": f"❌ Denied by {by}",
        "expired": "⌛ Expired: nobody decided in time, so it was not run.",
        "declined": "↩️ Not run: a new message came instead of a decision.",
        "withdrawn": "↩️ Not run: the helper that asked was stopped.",
    }
    return lines.get(status, f"Decided: {status}")
