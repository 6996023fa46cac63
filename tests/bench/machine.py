"""The machine a suite run measured: printed above its table, because figures mean little
without the cores, memory and versions that produced them."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
from pathlib import Path

from tests.support.postgres_server import find_bindir


def _version(*command: str) -> str:
    """The first line a `--version` prints, or "not installed"."""
    if shutil.which(command[0]) is None and not Path(command[0]).exists():
        return "not installed"
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except OSError:
        return "not installed"
    said = (done.stdout or done.stderr).strip()
    return said.splitlines()[0] if said else "?"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _memory_gib() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB RAM"
    except OSError:
        pass
    return "RAM unknown"


def _postgres() -> str:
    bindir = find_bindir()
    if bindir is None:
        return "PostgreSQL not installed"
    return _version(str(Path(bindir) / "postgres"), "--version")


def describe() -> list[str]:
    """One line each: CPU and cores, memory and system, Python, Redis, PostgreSQL."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = ", ".join(f"{n:.2f}" for n in os.getloadavg())
    return [
        f"CPU: {_cpu_model()}, {os.cpu_count()} cores ({usable} usable), load {load}",
        f"system: {platform.system()} {platform.release()}, {_memory_gib()}",
        f"Python: {platform.python_implementation()} {platform.python_version()}",
        f"Redis: {' '.join(_version('redis-server', '--version').split()[:3])}",
        f"PostgreSQL: {_postgres()}",
    ]
