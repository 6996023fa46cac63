"""One skill as read from its folder: `SKILL.md`'s front matter checked strictly, its size bounded.

The layout is the open "Agent Skills" one other agents already read, so a skill written for
them works here unchanged: a folder named like the skill, holding `SKILL.md` (YAML front
matter with `name` and `description`, then the instructions) and any files beside it. The
fields Parley does not use (`license`, `compatibility`, `metadata`, and those other agents
add) are tolerated; the two it needs are checked as the layout says. A skill that breaks a
rule is refused as a whole with one line that names its folder and the rule, since a skill
half read would give the model instructions its author never wrote.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePath

import yaml

SKILL_FILE = "SKILL.md"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_SKILL_FILE = 64 * 1024  # bytes of SKILL.md: instructions, not a library
MAX_FOLDER = 8 * 1024 * 1024  # bytes of every file of a skill together
MAX_FILES = 200  # files in a skill's folder, SKILL.md included
MAX_ENTRIES = 1000  # files and folders in it: empty folders cost a walk too
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")  # the layout's rule: no hyphen at an end or twice
FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.DOTALL)


class SkillError(ValueError):
    """A skill refused, with the one line that says why."""


@dataclass(frozen=True)
class Skill:
    """A skill as the prompt lists it and `load_skill` returns it. `files` are the paths of
    the files beside SKILL.md, relative to `folder`, sorted."""

    name: str
    description: str
    folder: Path
    instructions: str
    allowed_tools: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


def read_skill(folder: Path) -> Skill:
    """The skill in `folder`, or a SkillError naming the folder and what is wrong with it."""
    try:
        files = _files(folder)
        meta, body = _front_matter(folder / SKILL_FILE)
        return _skill(folder, meta, body, files)
    except SkillError as exc:
        raise SkillError(f"skill {folder}: {exc}") from None
    except OSError as exc:
        raise SkillError(f"skill {folder}: cannot be read: {exc.strerror or exc}") from None


def _front_matter(path: Path) -> tuple[dict[str, object], str]:
    """The front matter as a mapping, and the instructions after it."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        raise SkillError(f"has no {SKILL_FILE}") from None
    if not stat.S_ISREG(info.st_mode):
        raise SkillError(f"{SKILL_FILE} is not a regular file")
    if info.st_size > MAX_SKILL_FILE:
        raise SkillError(f"{SKILL_FILE} has {info.st_size} bytes; at most {MAX_SKILL_FILE}")
    try:
        text = path.read_bytes()[: MAX_SKILL_FILE + 1].decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise SkillError(f"{SKILL_FILE} is not UTF-8 text") from None
    found = FRONT.match(text)
    if found is None:
        raise SkillError(f"{SKILL_FILE} does not start with front matter between --- lines")
    try:
        meta = yaml.safe_load(found.group(1))
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        raise SkillError(f"{SKILL_FILE}'s front matter is not valid YAML{line}") from None
    if not isinstance(meta, dict):
        raise SkillError(f"{SKILL_FILE}'s front matter is not a mapping of fields")
    return {str(key): value for key, value in meta.items()}, found.group(2).strip()


def _skill(folder: Path, meta: dict[str, object], body: str, files: tuple[str, ...]) -> Skill:
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str) or not name:
        raise SkillError("the front matter has no name")
    if len(name) > MAX_NAME or NAME.fullmatch(name) is None:
        raise SkillError(
            f"name {name[:80]!r} is not lowercase letters, digits and single hyphens "
            f"(at most {MAX_NAME})"
        )
    if name != folder.name:
        raise SkillError(f"name {name!r} is not the folder's name {folder.name!r}")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("the front matter has no description")
    if len(description) > MAX_DESCRIPTION:
        raise SkillError(f"the description has {len(description)} characters; at most 1024")
    if not body:
        raise SkillError(f"{SKILL_FILE} has no instructions after its front matter")
    line = " ".join(description.split())
    return Skill(name, line, folder, body, _tools(meta.get("allowed-tools")), files)


def _tools(value: object) -> tuple[str, ...]:
    """`allowed-tools`: a string of names (split on spaces or commas) or a list of them."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(n for n in re.split(r"[\s,]+", value) if n)
    if isinstance(value, list) and all(isinstance(n, str) for n in value):
        return tuple(n.strip() for n in value if n.strip())
    raise SkillError("allowed-tools is neither a string of tool names nor a list of them")


def hidden(path: PurePath) -> bool:
    """Whether `path` names a hidden file or folder or goes through one: a part of it that
    starts with a dot (`.git`, `.env`), `.` and `..` aside. Those are not the skill's: a
    `.git` of a skill kept in a repository of its own (its remote's URL may hold a token),
    an `.env` beside it. They are never listed, looked into or read."""
    return any(part.startswith(".") and part not in (".", "..") for part in path.parts)


def leads_to_hidden(path: Path, root: Path) -> bool:
    """Whether `path`, its links followed as far as they go (whether or not what they name
    is there), is a hidden file or folder of the folder `root` (resolved), or is in one."""
    try:
        target = path.resolve()
    except (OSError, RuntimeError):  # a loop: refused as a link that leads nowhere
        return False
    return target.is_relative_to(root) and hidden(target.relative_to(root))


def _files(folder: Path) -> tuple[str, ...]:
    """The files beside SKILL.md, relative to `folder`; a link that leads out of the folder,
    a special file, or a folder too large refuses the skill. Hidden entries, and links that
    lead to one, are not the skill's (see `hidden`) and are left out."""
    root = folder.resolve(strict=True)
    found: list[str] = []
    total = entries = 0
    for top, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for entry in sorted(n for n in [*dirs, *names] if not n.startswith(".")):
            entries += 1
            if entries > MAX_ENTRIES:
                raise SkillError(f"the folder holds more than {MAX_ENTRIES} files and folders")
            path = Path(top) / entry
            if path.is_symlink() and leads_to_hidden(path, root):
                continue
            relative = path.relative_to(folder).as_posix()
            _check_link(path, root, relative)
            info = path.stat()
            if stat.S_ISDIR(info.st_mode):
                continue
            if not stat.S_ISREG(info.st_mode):
                raise SkillError(f"{relative} is not a regular file")
            total += info.st_size
            if relative != SKILL_FILE:
                found.append(relative)
            if len(found) >= MAX_FILES or total > MAX_FOLDER:
                raise SkillError(
                    f"the folder holds more than {MAX_FILES} files or {MAX_FOLDER} bytes"
                )
    return tuple(sorted(found))


def _check_link(path: Path, root: Path, relative: str) -> None:
    """A SkillError when `path` is a link that leads out of `root` (or nowhere)."""
    if not path.is_symlink():
        return
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise SkillError(f"{relative} is a link that leads nowhere") from None
    if not target.is_relative_to(root):
        raise SkillError(f"{relative} is a link that leads out of the skill's folder")
