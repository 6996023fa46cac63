"""`/skills [off NAME | on NAME]`: the operator's skills offered in a chat (each with the
tools it names, those switched off in the chat marked), and an admin's switch for each, the
same on every platform.

A switched-off skill is kept as a row among the chat's switched-off tools, named `skill:NAME`
(`bot.vocabulary.chat_settings.SKILL`), for every topic and thread of the chat: the next turn
there lists it no more in its system prompt, and `load_skill` refuses it. The web process reads
the skills' folders itself (`bot.skills.library.Skills`, looked at again every few seconds),
so the list is the one the workers' next turns see.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.skills.library import Library, Skills
from bot.store.chats import ChatSettings
from bot.vocabulary.chat_settings import SKILL, skills_off

HOW = "An admin may switch one off here with {command} off NAME, and on with {command} on NAME."
NONE = "No skills are installed. An operator adds them as folders in PARLEY_SKILLS_DIR."
SHOWN = 160  # characters of a description in the list
LISTED = 3000  # characters of the list: one message on every platform (Telegram's 4,096)


@dataclass(frozen=True)
class ChatSkills:
    """What `/skills` reads: the operator's skills and a chat's switches."""

    skills: Skills
    chats: ChatSettings

    async def answer(
        self, chat: str, said: str, *, who: str, may_change: bool, command: str
    ) -> str:
        """The answer to `command` with `said` after it, in `chat`, asked by `who`."""
        library = await self.skills.current()
        words = said.split()
        if not words:
            return await self._listed(chat, library, command)
        switch, name = words[0].lower(), " ".join(words[1:])
        if switch not in ("on", "off") or len(words) != 2:
            return f"Say {command} to see the skills, {command} off NAME or {command} on NAME."
        if not may_change:
            return "Only an admin may switch skills on or off in this chat."
        if name not in library.skills:
            known = ", ".join(library.skills) or "none"
            return f"There is no skill {name[:64]!r} here. Skills: {known}."
        await self.chats.switch(chat, SKILL + name, on=switch == "on", by=who)
        if switch == "on":
            return f"The skill {name} is switched on in this chat again."
        return f"The skill {name} is switched off in this chat: I will not use it here."

    async def _listed(self, chat: str, library: Library, command: str) -> str:
        refused = len(library.refused)
        note = f"\n{refused} skill folder(s) were refused; the log says why." if refused else ""
        if not library.skills:
            return NONE + note
        switched = await self.chats.tools_off(chat)
        off = skills_off(switched)
        lines: list[str] = []
        skills = list(library.skills.values())
        for count, skill in enumerate(skills):
            about = skill.description
            about = about if len(about) <= SHOWN else about[: SHOWN - 1] + "…"
            mark = " (switched off here)" if skill.name in off else ""
            line = f"• {skill.name}{mark}: {about}{_needs(skill.allowed_tools, switched)}"
            if sum(map(len, lines)) + len(line) > LISTED:
                lines.append(f"… and {len(skills) - count} more")
                break
            lines.append(line)
        listed = "\n".join(lines)
        return f"Skills in this chat:\n{listed}\n{HOW.format(command=command)}{note}"


def _needs(tools: tuple[str, ...], off: frozenset[str]) -> str:
    """The tools a skill names (`allowed-tools`), those switched off in the chat marked: a
    skill whose tools are off here cannot be followed as written."""
    if not tools:
        return ""
    named = ", ".join(f"{t} (switched off here)" if t in off else t for t in tools[:8])
    more = f" and {len(tools) - 8} more" if len(tools) > 8 else ""
    return f" Uses: {named}{more}."
