"""docs/ARCHITECTURE.md's map names every module of Parley's packages, in its folder, and
nothing that is gone: a module added, moved or removed without the map fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "adapters", "worker", "bootstrap")
FOLDER = re.compile(r"^\*\*`([\w/]+)/`\*\*")
MODULE = re.compile(r"^- `(\w+\.py)`")


def mapped() -> set[str]:
    """The modules the map names, as paths from the repository's root."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("\n## The map\n", 1)[1].split("\n## ", 1)[0]
    found: set[str] = set()
    folder = ""
    for line in section.splitlines():
        if heading := FOLDER.match(line):
            folder = heading[1]
        elif (module := MODULE.match(line)) and folder:
            found.add(f"{folder}/{module[1]}")
    return found


def modules() -> set[str]:
    return {
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if path.name != "__init__.py" and "__pycache__" not in path.parts
    }


def test_the_map_names_every_module_and_only_those_that_exist() -> None:
    named = mapped()
    assert named, "no map found under '## The map'"
    assert sorted(modules() - named) == [], "modules the map does not name"
    assert sorted(named - modules()) == [], "modules the map names that do not exist"
