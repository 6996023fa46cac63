"""The skills of the operator's folders, read together, and read again once the folders change.

Skills come from PARLEY_SKILLS_DIR and the bootstrap folder's `skills/`. A bad skill (see
`bot.skills.skill`) is refused with one line and the rest load; a name found in both
folders is refused in both, since which of the two the operator meant is anybody's guess.

A worker never restarts for a skill: before a turn, `Skills.current` looks at the folders at
most every few seconds, through a fingerprint of every entry's path, size and time (a
`stat` each, no file read), and reads them again only when it changed. Both happen in a
thread, so a large folder or a slow disk costs the event loop nothing.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bot.config.settings import Settings
from bot.skills.recheck import CHECK_EVERY, Recheck
from bot.skills.skill import Skill, SkillError, read_skill

log = logging.getLogger(__name__)
MAX_SKILLS = 100  # their lines are in every system prompt
MAX_ENTRIES = 20_000  # paths a fingerprint looks at, at most
Fingerprint = tuple[tuple[str, int, int], ...]
_SAID: set[str] = set()  # the lines about the skills this process said last


@dataclass(frozen=True)
class Library:
    """The skills loaded, by name in order, and one line for each folder refused."""

    skills: Mapping[str, Skill] = field(default_factory=dict)
    refused: tuple[str, ...] = ()

    def offered(self, off: Collection[str] = ()) -> list[Skill]:
        """The skills a chat is offered: all but those its admins switched `off`."""
        return [skill for name, skill in self.skills.items() if name not in off]


def read_library(roots: Iterable[Path]) -> Library:
    """Every skill in `roots` (folders that do not exist hold none), bad ones refused."""
    found: dict[str, list[Path]] = {}
    refused: list[str] = []
    for root in roots:
        for folder in _folders(root, refused):
            found.setdefault(folder.name, []).append(folder)
    skills: dict[str, Skill] = {}
    for name in sorted(found):
        places = found[name]
        if len(places) > 1:
            both = " and ".join(map(str, places))
            refused.append(f"skill {name}: in both {both}: neither is loaded")
        elif len(skills) >= MAX_SKILLS:
            refused.append(f"skill {places[0]}: more than {MAX_SKILLS} skills; not loaded")
        else:
            try:
                skills[name] = read_skill(places[0])
            except SkillError as exc:
                refused.append(str(exc))
    return Library(skills, tuple(refused))


def _folders(root: Path, refused: list[str]) -> list[Path]:
    """The skill folders at the top of `root`; hidden entries and plain files are not skills."""
    try:
        entries = sorted(root.iterdir())
    except FileNotFoundError:
        return []
    except OSError as exc:
        refused.append(f"skills folder {root}: cannot be read: {exc.strerror or exc}")
        return []
    folders = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_symlink():
            refused.append(f"skill {entry}: is a link; put the skill's folder itself there")
        elif entry.is_dir():
            folders.append(entry)
    return folders


def fingerprint(roots: Iterable[Path]) -> Fingerprint:
    """Every path under `roots` with its size and modification time, without reading a file:
    a skill added, edited, renamed or removed changes it."""
    entries: list[tuple[str, int, int]] = []
    for root in roots:
        for top, dirs, names in os.walk(root, followlinks=False):
            dirs[:] = [d for d in dirs if not d.startswith(".")]  # as the skills are read
            for name in [*dirs, *names]:
                path = os.path.join(top, name)
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                entries.append((path, info.st_size, info.st_mtime_ns))
            if len(entries) > MAX_ENTRIES:
                return tuple(entries)
    return tuple(entries)


class Skills:
    """A process's library of skills, looked at again at most every `interval` seconds."""

    def __init__(
        self,
        roots: Iterable[Path],
        interval: float = CHECK_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.roots = tuple(roots)
        self.library = Library()
        self._print: Fingerprint | None = None
        self._recheck = Recheck("the skills", interval, clock)

    @classmethod
    def of(cls, settings: Settings) -> Skills:
        """The skills of PARLEY_SKILLS_DIR, and of PARLEY_BOOTSTRAP_DIR's `skills/`."""
        roots = [settings.skills_dir]
        if settings.bootstrap_dir is not None:
            roots.append(settings.bootstrap_dir / "skills")
        return cls(roots)

    def load(self) -> Library:
        """Read the folders again if they changed since the last read; blocking, so called
        in a thread (or before the process serves anything)."""
        now = fingerprint(self.roots)
        if now == self._print:
            return self.library
        library = read_library(self.roots)
        _say(library, self.roots)
        self.library, self._print = library, now
        return library

    async def current(self) -> Library:
        """The library as the folders are now, give or take `interval` seconds."""
        await self._recheck.due(self.load)
        return self.library


def _say(library: Library, roots: tuple[Path, ...]) -> None:
    """Log what was loaded and each refusal, once a process however many libraries it reads
    (`parley worker` builds its agent twice): a line said is said again only after it
    stopped being true for a while (a skill mended, then broken again)."""
    names = ", ".join(library.skills)
    loaded = f"skills loaded from {', '.join(map(str, roots))}: {names}"
    if names and loaded not in _SAID:  # a deployment without skills hears nothing of them
        log.info("%s", loaded)
    for line in library.refused:
        if line not in _SAID:
            log.warning("%s", line)
    _SAID.clear()
    _SAID.update([loaded, *library.refused])
