"""What the lists people get in a chat (`/tasks`, `/memory`, `/permissions`) have in common:
numbered lines (`#7 …`), a button per item, and buttons that carry the item's number alone,
so nothing a person wrote travels in a button and every press is looked up again.

Each list says its own things (`adapters.chat.task_list`, `memory_list`, `permission_list`);
Telegram draws them with `adapters.telegram.item_list`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMBER = r"[1-9][0-9]{0,17}"  # a 64-bit row id, in ASCII digits only
_ID = re.compile(_NUMBER)


@dataclass(frozen=True)
class Listing:
    """The list's lines (the header first) and the numbers of the items that get a button."""

    lines: list[str]
    buttons: list[int]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


class ItemButtons:
    """One list's button data: `{prefix}{number}`, Telegram's callback data (well inside its
    64 bytes); a Slack button carries the number alone (`parse_id`)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self._data = re.compile(re.escape(prefix) + f"({_NUMBER})")

    def payload(self, item: int) -> str:
        return f"{self.prefix}{item}"

    def parse(self, data: str | None) -> int | None:
        """The number in a button's data, None for anything else."""
        match = self._data.fullmatch(data or "")
        return int(match[1]) if match else None


def parse_id(value: str | None) -> int | None:
    """The number a Slack button carries as its value, None for anything else."""
    return int(value) if value is not None and _ID.fullmatch(value) else None


def shows(lines: list[str], item: int) -> bool:
    """Whether a posted list's `lines` have a line for `item`."""
    return any(line.startswith(f"#{item} ") for line in lines)


def replace_line(lines: list[str], item: int, line: str) -> list[str]:
    """`lines` of a posted list with `item`'s line replaced by `line`."""
    prefix = f"#{item} "
    return [line if old.startswith(prefix) else old for old in lines]
