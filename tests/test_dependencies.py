"""Every third-party module Parley's code imports comes from a distribution it declares.

A module that only arrives as another package's dependency (an SDK's HTTP client, say) can
vanish or change with that package's next release, and a wheel installed elsewhere would
break at import; so each one is named in `pyproject.toml`, with the version Parley runs on.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("bot", "adapters", "worker")


def canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def declared() -> set[str]:
    """The distributions `[project].dependencies` names (extras and versions aside)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {
        canonical(re.split(r"[\s\[<>=!~;@]", spec, maxsplit=1)[0])
        for spec in project["dependencies"]
    }


def imported() -> dict[str, set[str]]:
    """Each top-level module imported by Parley's packages, with the files importing it;
    the standard library and Parley's own packages left out."""
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.partition(".")[0]
                    if top not in sys.stdlib_module_names and top not in PACKAGES:
                        found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_imported_module_is_a_declared_dependency() -> None:
    providers = importlib.metadata.packages_distributions()
    wanted = declared()
    modules = imported()
    assert "aiohttp" in modules and "pydantic" in modules  # the scan sees the code's imports
    undeclared = {
        module: sorted(files)
        for module, files in modules.items()
        if not {canonical(d) for d in providers.get(module, [])} & wanted
    }
    assert undeclared == {}, "imported but not in [project].dependencies (uv add them)"
