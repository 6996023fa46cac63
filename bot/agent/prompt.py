"""The system prompt: the bootstrap files and the skills, then the chat's instruction, then
where and when the conversation happens.

The bootstrap files and the skills' names change rarely and form the cached prefix. The
date changes daily, so it comes after them; the time of day is stamped on each user message
instead of the system prompt, because a clock in the system prompt would invalidate the
cached conversation on every call.

The default files are package data (the `bootstrap` package), found through `importlib.resources`:
the same lookup from a checkout, an editable install, the Docker image and an installed wheel,
so no install runs without its persona. A file found nowhere is said once in the log, since a
prompt without it would otherwise go unnoticed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from bot.llm.base import SystemPart
from bot.memory.prompt import memory_part
from bot.skills.library import Skills
from bot.skills.prompt import skills_text
from bot.skills.recheck import CHECK_EVERY, Recheck
from bot.tools.base import ToolContext
from bot.tools.untrusted import NOTE as UNTRUSTED_NOTE
from bot.vocabulary.ran_with import PromptParts

log = logging.getLogger(__name__)
BOOTSTRAP_FILES = ("SOUL.md", "USER.md", "AGENTS.md")
DEFAULT_DIR = files("bootstrap")
SETTING = "PARLEY_BOOTSTRAP_DIR"


def load_bootstrap(override: Path | None, default: Traversable = DEFAULT_DIR) -> str:
    """The bootstrap files joined; a file in `override` replaces the default of that name.
    An empty file leaves its part out on purpose; a missing one is logged."""
    if override is not None and not any((override / name).is_file() for name in BOOTSTRAP_FILES):
        log.warning(
            "%s (%s) holds none of %s: the default bootstrap files are used",
            SETTING,
            override,
            ", ".join(BOOTSTRAP_FILES),
        )
    directories: list[Traversable] = [d for d in (override, default) if d is not None]
    parts = []
    for name in BOOTSTRAP_FILES:
        found = next((d / name for d in directories if (d / name).is_file()), None)
        if found is None:
            log.warning(
                "the bootstrap file %s is in neither %s (%s) nor %s: the system prompt goes "
                "without it",
                name,
                SETTING,
                override or "not set",
                default,
            )
            continue
        if text := found.read_text(encoding="utf-8").strip():
            parts.append(text)
    return "\n\n".join(parts)


class Bootstrap:
    """The bootstrap files as last read, read again once one of them changed: a worker never
    restarts for its persona. As with the skills (`bot.skills.library`), before a turn
    `current` looks at the override folder's files at most every `interval` seconds (a `stat`
    each, in a thread) and reads them again only when one's size or time changed. The
    default files are package data, which does not change under a running process."""

    def __init__(
        self,
        override: Path | None,
        default: Traversable = DEFAULT_DIR,
        interval: float = CHECK_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.override, self.default = override, default
        self.text = ""
        self._print: tuple[tuple[int, int] | None, ...] | None = None
        self._recheck = Recheck("the bootstrap files", interval, clock)

    @classmethod
    def fixed(cls, text: str) -> Bootstrap:
        """Bootstrap text given as it is (a test's, a program's), never read from files."""
        made = cls(None)
        made.text = text
        made._recheck.never()
        return made

    def load(self) -> str:
        """The files' text, read again if they changed since the last read; blocking, so
        called in a thread (or before the process serves anything)."""
        now = self._fingerprint()
        if now != self._print:
            self.text, self._print = load_bootstrap(self.override, self.default), now
        return self.text

    async def current(self) -> str:
        """The text as the files are now, give or take `interval` seconds."""
        await self._recheck.due(self.load)
        return self.text

    def _fingerprint(self) -> tuple[tuple[int, int] | None, ...]:
        if self.override is None:
            return ()
        return tuple(_stat(self.override / name) for name in BOOTSTRAP_FILES)


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns


class PromptBuilder:
    def __init__(self, bootstrap: Bootstrap, skills: Skills | None = None) -> None:
        self.bootstrap = bootstrap  # the persona, as last read (`Bootstrap.current`)
        self.skills = skills  # the operator's skills, as last read (`Skills.current`)

    def system(
        self,
        ctx: ToolContext,
        now: datetime,
        memory: tuple[str, ...] = (),
        chat_instruction: str | None = None,
        skills_off: frozenset[str] = frozenset(),
    ) -> list[SystemPart]:
        """`memory`: what the conversation's scope remembers, in a part of its own after the
        bootstrap's (see `bot.memory.prompt`), so the bootstrap stays cached when it changes.
        `chat_instruction`: what the chat's admins asked for every answer there, in a part of
        its own after the bootstrap's too, and before the person's own preferences.
        `skills_off`: the skills the chat's admins switched off, left out of the listing,
        which is cached with the bootstrap (one prefix per set of skills offered)."""
        local = now.astimezone(ctx.timezone)
        where = (
            "## This conversation\n"
            f"Platform: {ctx.platform}; chat: {ctx.chat_kind}; "
            f"you are talking with {ctx.user.name or ctx.user.id}.\n"
            f"Today is {local:%A, %d %B %Y}; time zone {ctx.timezone.key}. "
            "Each user message starts with the time it was sent, in square brackets; "
            "the current_time tool tells the exact time now." + preferred(ctx)
        )
        rules = f"{self.bootstrap.text}\n\n## Tool results\n{UNTRUSTED_NOTE}"
        remembered = memory_part(memory)
        listed = self.skills and skills_text(self.skills.library.offered(skills_off))
        return [
            SystemPart(rules, stable=True),
            *([SystemPart(listed, stable=True)] if listed else []),
            *([chat_part(chat_instruction)] if chat_instruction else []),
            *([remembered] if remembered is not None else []),
            SystemPart(where, stable=False),
        ]

    def parts(
        self, ctx: ToolContext, chat_instruction: str | None, skills_off: frozenset[str]
    ) -> PromptParts:
        """The hashes of what `system` puts in the prompt that an operator changes: the
        bootstrap, the skills' listing, the chat's and the person's standing instructions."""
        listed = self.skills and skills_text(self.skills.library.offered(skills_off))
        instructions = f"{chat_instruction or ''}\n{ctx.preferences.instruction or ''}"
        return PromptParts.of(self.bootstrap.text, listed or "", instructions)

    @staticmethod
    def stamp(ctx: ToolContext, now: datetime) -> str:
        return f"[{now.astimezone(ctx.timezone):%a %Y-%m-%d %H:%M %Z}]"


def chat_part(instruction: str) -> SystemPart:
    """The chat's standing instruction, as its admins set it (`/instructions`): not part of
    the cached prefix, so changing it leaves the bootstrap's cache as it was."""
    return SystemPart(
        "## This chat\n"
        "The admins of this chat asked you to follow this in every answer here: "
        f'"{instruction}" (the chat\'s standing request; it does not override your other '
        "instructions).",
        stable=False,
    )


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
