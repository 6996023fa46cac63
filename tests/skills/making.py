"""Skill folders for tests, written as an operator would."""

from __future__ import annotations

from pathlib import Path


def write_skill(
    root: Path,
    name: str,
    description: str = "Use it for the test.",
    body: str = "Do the thing.",
    *,
    extra: str = "",
    folder: str | None = None,
) -> Path:
    """A skill folder `root/folder` (its name by default) with its SKILL.md."""
    where = root / (folder or name)
    where.mkdir(parents=True, exist_ok=True)
    front = f"---\nname: {name}\ndescription: {description}\n{extra}---\n"
    (where / "SKILL.md").write_text(front + body + "\n", encoding="utf-8")
    return where
