"""The packages a program may import besides the standard library: matplotlib and what it needs.

"Plot this CSV" needs matplotlib (and numpy, Pillow, and their own needs), and nothing else of
the worker's virtualenv may be seen inside: it holds Parley's code and its other libraries.
So the sandbox's interpreter finds exactly these distributions, their files bound read-only
over an empty site-packages of its own (`mounts`), found here from the virtualenv's
installed metadata: each distribution named in `OFFERED`, then what it requires, and the
top-level entries of their files (`matplotlib/`, `numpy.libs/`, `pylab.py`...). Their paths
travel to the stage in the run's plan; a machine where they are not installed offers the
standard library alone.
"""

from __future__ import annotations

import functools
import os
import re
import sysconfig
from importlib import metadata

OFFERED = ("matplotlib",)
NAME = re.compile(r"^[A-Za-z0-9_.-]+$")
REQUIRED = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@functools.cache
def offered() -> tuple[str, ...]:
    """The host paths of the offered distributions' top-level entries, read once a process."""
    entries: set[str] = set()
    for dist in _closure(OFFERED):
        root = os.path.realpath(str(dist.locate_file("")))
        for file in dist.files or ():
            first = file.parts[0] if file.parts else ""
            if first in ("", "..", "__pycache__") or first.endswith((".dist-info", ".pth")):
                continue
            if NAME.match(first):
                path = os.path.join(root, first)
                if os.path.lexists(path):
                    entries.add(path)
    return tuple(sorted(entries))


def offers_charts() -> bool:
    """Whether matplotlib is installed here (Parley's `charts` extra), so a program can draw."""
    try:
        metadata.distribution(OFFERED[0])
    except metadata.PackageNotFoundError:
        return False
    return True


def site_packages(prefix: str) -> str:
    """Where the interpreter installed at `prefix` looks for packages (inside the sandbox its
    installation is at the same path)."""
    return sysconfig.get_path("purelib", vars={"base": prefix, "platbase": prefix})


def _closure(names: tuple[str, ...]) -> list[metadata.Distribution]:
    """The installed distributions `names` and all they require but for their extras; a
    requirement not installed (one for another Python) is passed over."""
    found: dict[str, metadata.Distribution] = {}
    waiting = list(names)
    while waiting:
        name = waiting.pop()
        key = name.lower().replace("_", "-")
        if key in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        found[key] = dist
        for line in dist.requires or ():
            named = REQUIRED.match(line)
            if named is not None and "extra ==" not in line.partition(";")[2]:
                waiting.append(named.group(1))
    return list(found.values())
