"""What a person chose for themselves: the record the store keeps, a turn's tools read, and
every place that sets them shows back (the rules their values follow are in
`bot.people.preferences`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Name = Literal["timezone", "language", "model", "instruction"]
NAMES: tuple[Name, ...] = ("timezone", "language", "model", "instruction")


@dataclass(frozen=True)
class Preferences:
    """None: not chosen, the deployment's default applies."""

    timezone: str | None = None
    language: str | None = None
    model: str | None = None
    instruction: str | None = None
