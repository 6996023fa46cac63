"""`load_skill`: a skill's instructions, or one of its files, when the model decides it needs them.

The system prompt lists the skills by name and description only (`bot.skills.prompt`); the
model calls this tool for the whole text, and again for a file the instructions name. A file
is read only inside its skill's folder, links followed and the result checked, never a
hidden one (a `.git`, an `.env`: not the skill's, and where secrets sit), and at most
`MAX_FILE` bytes of it. A skill its chat's admins switched off (`/skills off NAME`, a row in
the chat's switched-off tools as `skill:NAME`) is refused here as it is absent from the
prompt. The tool is offered only while there is a skill to load: it comes and goes with the
library (a `ToolSource`), so a skill added to an empty folder brings it in the next turn.
Skill text is the operator's, trusted like the bootstrap files, so it is not marked as
outside data; what a skill's instructions lead the model to fetch from the web still is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Annotated

from pydantic import Field

from bot.skills.library import Skills
from bot.skills.skill import MAX_NAME, SKILL_FILE, Skill, hidden
from bot.store.chats import ChatSettings
from bot.tools.base import Tool, ToolContext, ToolError, tool
from bot.vocabulary.chat_settings import skills_off
from bot.vocabulary.chats import chat_of

LOAD = "load_skill"
MAX_FILE = 256 * 1024  # bytes of one file in one result; the executor's output limit cuts too
MAX_PATH = 1024


class SkillTools:
    """`load_skill` as a tool source: offered while the library holds a skill."""

    def __init__(self, skills: Skills, chats: ChatSettings | None) -> None:
        self.skills = skills
        self.chats = chats  # None: no chat settings here (`parley chat`), nothing off
        self._tool = _load_skill(self)

    def tools(self) -> Mapping[str, Tool]:
        return {LOAD: self._tool} if self.skills.library.skills else {}

    async def offered(self, ctx: ToolContext, name: str) -> Skill:
        """The skill `name` as this call's chat is offered it, or a ToolError saying why not."""
        library = self.skills.library
        skill = library.skills.get(name)
        if skill is None:
            known = ", ".join(library.skills) or "none"
            raise ToolError(f"There is no skill {name[:MAX_NAME]!r}. Skills: {known}.")
        if self.chats is not None:
            off = skills_off(await self.chats.tools_off(chat_of(ctx.session_key)))
            if name in off:
                raise ToolError(f"The skill {name} is switched off in this chat.")
        return skill


def _load_skill(source: SkillTools) -> Tool:
    @tool(read_only=True, isolation="loop", name=LOAD)
    async def load_skill(
        ctx: ToolContext,
        name: Annotated[
            str, Field(min_length=1, max_length=MAX_NAME, description="The skill's name")
        ],
        file: Annotated[
            str | None,
            Field(
                default=None,
                max_length=MAX_PATH,
                description="A file of the skill to read, as its instructions name it "
                "(e.g. reference.md); leave it out for the instructions themselves",
            ),
        ] = None,
    ) -> str:
        """The instructions of one of the skills listed under "Skills" in your instructions,
        with the list of its files; or, with `file`, one of those files. Call it when a
        request matches a skill's description, before answering, and follow what it says."""
        skill = await source.offered(ctx, name)
        if file is None:
            return instructions(skill)
        return await asyncio.to_thread(read_skill_file, skill, file)

    return load_skill


def instructions(skill: Skill) -> str:
    """What `load_skill(name)` returns: the instructions, then the files and tools named."""
    text = f'<skill name="{skill.name}">\n{skill.instructions}\n</skill>'
    if skill.files:
        text += (
            f'\nFiles of this skill (read one with load_skill(name="{skill.name}", '
            f'file="PATH")): {", ".join(skill.files)}'
        )
    if skill.allowed_tools:
        text += f"\nTools this skill uses: {', '.join(skill.allowed_tools)}"
    return text


def read_skill_file(skill: Skill, file: str) -> str:
    """A file of `skill` as text; a ToolError for a path that leaves the skill's folder
    (by `..`, an absolute path or a link), one that names or leads to a hidden file or
    folder (`bot.skills.skill.hidden`: refused alike whether it is there or not, so the
    refusal says nothing of what the folder holds), a file that is not there or is not text."""
    if "\0" in file or not file.strip():
        raise ToolError("Refused: name a file of the skill, such as one its files list shows.")
    if PurePosixPath(file).is_absolute() or file.startswith("~"):
        raise ToolError(f"Refused: {file!r} is absolute; name a file of the skill relative to it.")
    root = skill.folder.resolve()
    if hidden(PurePosixPath(file)):
        raise ToolError(_hidden(skill, file))
    try:
        path = (root / file).resolve()  # links followed as far as they go, there or not
    except (OSError, RuntimeError):
        raise ToolError(f"The skill {skill.name} has no file {file!r}.") from None
    if not path.is_relative_to(root):
        raise ToolError(f"Refused: {file!r} is outside the skill {skill.name}'s folder.")
    if hidden(path.relative_to(root)):
        raise ToolError(_hidden(skill, file))
    if not path.exists():
        raise ToolError(f"The skill {skill.name} has no file {file!r}.")
    if not path.is_file():
        raise ToolError(f"{file!r} is not a file of the skill {skill.name}.")
    if path == root / SKILL_FILE:
        return instructions(skill)
    return _text(path, file)


def _hidden(skill: Skill, file: str) -> str:
    return (
        f"Refused: {file!r} is, or leads to, a hidden file or folder (its name starts with a "
        f"dot), which is not part of the skill {skill.name}."
    )


def _text(path: Path, file: str) -> str:
    with path.open("rb") as opened:
        data = opened.read(MAX_FILE + 1)
    cut = len(data) > MAX_FILE
    try:
        text = data[:MAX_FILE].decode("utf-8", errors="strict" if not cut else "ignore")
    except UnicodeDecodeError:
        raise ToolError(f"{file!r} is not text; it cannot be read here.") from None
    return text + (f"\n[cut at {MAX_FILE} bytes]" if cut else "")
