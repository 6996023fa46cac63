"""The skills a turn is offered, as a part of the system prompt's cached prefix.

Only names and one-line descriptions are listed, sorted by name, so the part is the same
from one call to the next until a skill changes, and the provider's cache of it holds; the
instructions themselves come in a tool result when the model calls `load_skill`, which costs
nothing to a turn that needs no skill.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.skills.skill import Skill

HEADING = "## Skills"
HOW = (
    "Skills are instructions the operator wrote for particular tasks. When a request matches "
    "a skill's description, call load_skill with its name before you answer, then follow "
    "what it says; load a file it names with load_skill(name, file). Skills you have:"
)


def skills_text(skills: Iterable[Skill]) -> str | None:
    """The listing, or None when there is no skill to offer."""
    lines = [f"- {skill.name}: {skill.description}" for skill in sorted(skills, key=_name)]
    if not lines:
        return None
    return f"{HEADING}\n{HOW}\n" + "\n".join(lines)


def _name(skill: Skill) -> str:
    return skill.name
