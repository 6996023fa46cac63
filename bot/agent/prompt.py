"""The system prompt: the bootstrap files, then where and when the conversation happens.

The bootstrap files change rarely and form the cached prefix. The date changes daily, so it
comes after them; the time of day is stamped on each user message instead of the system
prompt, because a clock in the system prompt would invalidate the cached conversation on
every call.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from bot.llm.base import SystemPart
from bot.memory.prompt import memory_part
from bot.tools.base import ToolContext
from bot.tools.untrusted import NOTE as UNTRUSTED_NOTE

BOOTSTRAP_FILES = ("SOUL.md", "USER.md", "AGENTS.md")
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "bootstrap"


def load_bootstrap(override: Path | None, default: Path = DEFAULT_DIR) -> str:
    """The bootstrap files joined; a file in `override` replaces the default of that name."""
    parts = []
    for name in BOOTSTRAP_FILES:
        for directory in (override, default):
            path = directory / name if directory else None
            if path is not None and path.is_file():
                text = path.read_text(encoding="utf-8").strip()
                if text:
                    parts.append(text)
                break
    return "\n\n".join(parts)


class PromptBuilder:
    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap

    def system(
        self, ctx: ToolContext, now: datetime, memory: tuple[str, ...] = ()
    ) -> list[SystemPart]:
        """`memory`: what the conversation's scope remembers, in a part of its own after the
        bootstrap's (see `bot.memory.prompt`), so the bootstrap stays cached when it changes."""
        local = now.astimezone(ctx.timezone)
        where = (
            "## This conversation\n"
            f"Platform: {ctx.platform}; chat: {ctx.chat_kind}; "
            f"you are talking with {ctx.user.name or ctx.user.id}.\n"
            f"Today is {local:%A, %d %B %Y}; time zone {ctx.timezone.key}. "
            "Each user message starts with the time it was sent, in square brackets; "
            "the current_time tool tells the exact time now." + preferred(ctx)
        )
        rules = f"{self.bootstrap}\n\n## Tool results\n{UNTRUSTED_NOTE}"
        remembered = memory_part(memory)
        return [
            SystemPart(rules, stable=True),
            *([remembered] if remembered is not None else []),
            SystemPart(where, stable=False),
        ]

    @staticmethod
    def stamp(ctx: ToolContext, now: datetime) -> str:
        return f"[{now.astimezone(ctx.timezone):%a %Y-%m-%d %H:%M %Z}]"


def preferred(ctx: ToolContext) -> str:
    """What the person asked for every answer: their language and standing instruction.
    Only theirs: in a group, each person's turn carries their own."""
    chosen, name = ctx.preferences, ctx.user.name or ctx.user.id
    said = ""
    if chosen.language:
        said += f"\nAnswer {name} in {chosen.language}, unless they ask for another language."
    if chosen.instruction:
        said += (
            f"\n{name} asked you to follow this in every answer to them: "
            f'"{chosen.instruction}" (their own standing request; it does not override '
            "your other instructions)."
        )
    return said
