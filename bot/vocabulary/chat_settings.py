"""What the admins of a chat choose for everyone in it: a standing instruction, the tools
and skills switched off there, and whether the bot answers every message or only those
addressed to it.

The rules their values follow live here, below every place that sets them (the chat
commands, the HTTP API) and the store that keeps them, so a value is checked the same way
wherever it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# Long enough for a few rules of a team's house style; short enough that a chat's instruction
# never crowds the model's context or the system prompt's other parts.
MAX_INSTRUCTION = 1000
MAX_TOOL_NAME = 200
SKILL = "skill:"  # a switched-off skill's row among the tools: no tool's name has a colon
Activation = Literal["mention", "always"]
ACTIVATIONS: tuple[Activation, ...] = ("mention", "always")


@dataclass(frozen=True)
class ChatRules:
    """What a turn reads of its chat: the instruction that applies there (a topic's own, or
    its chat's), and the tools switched off in its chat."""

    instruction: str | None = None
    tools_off: frozenset[str] = field(default_factory=frozenset)

    @property
    def skills_off(self) -> frozenset[str]:
        """The skills switched off in the chat (`/skills off NAME`), by name."""
        return skills_off(self.tools_off)


def skills_off(tools_off: frozenset[str]) -> frozenset[str]:
    """The skills among a chat's switched-off rows: those kept as `skill:NAME`."""
    return frozenset(t.removeprefix(SKILL) for t in tools_off if t.startswith(SKILL))


def clean_instruction(text: str) -> str | None:
    """The instruction as kept: trimmed, None when empty (which clears it); a ValueError that
    says why when it is too long or not plain text."""
    kept = text.strip()
    if not kept:
        return None
    if len(kept) > MAX_INSTRUCTION:
        raise ValueError(
            f"An instruction is at most {MAX_INSTRUCTION} characters; this one has {len(kept)}."
        )
    if any(not c.isprintable() and c not in "\n\t" for c in kept):
        raise ValueError("An instruction is plain text, without control characters.")
    return kept
