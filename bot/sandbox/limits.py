"""What one run in the sandbox may use, and how it reaches the stage process.

The operator sets CPU time, memory, wall clock and output (`PARLEY_SANDBOX_*`); the rest are
fixed here, small enough that a hostile program cannot hurt the machine and large enough for
a program a person would ask for. `SandboxLimits` travels to the stage as JSON in the script
on its stdin, together with the paths of one run (`RunPlan`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.config.settings import Settings

PROCESSES = 64  # tasks of the sandbox's user, threads included: a fork bomb stops here
OPEN_FILES = 256
SCRATCH_MB = 64  # the working directory, in memory; also the most a turn's runs hand back
OUT_FILES = 10  # files of ./out/ one run hands back at most
TMP_MB = 16  # /tmp and /dev/shm, each
SANDBOX_UID = 1000  # who the program is inside; outside it is nobody, or the worker's user
GRACE_SECONDS = 2.0  # the stage's own wall clock runs this much longer than the worker's


@dataclass(frozen=True)
class SandboxLimits:
    cpu_seconds: int = 10
    memory_mb: int = 512
    timeout: float = 20.0
    output_limit: int = 64_000
    processes: int = PROCESSES
    open_files: int = OPEN_FILES
    scratch_mb: int = SCRATCH_MB
    tmp_mb: int = TMP_MB

    @classmethod
    def from_settings(cls, settings: Settings) -> SandboxLimits:
        return cls(
            cpu_seconds=settings.sandbox_cpu_seconds,
            memory_mb=settings.sandbox_memory_mb,
            timeout=settings.sandbox_timeout,
            output_limit=settings.sandbox_output_limit,
        )


@dataclass(frozen=True)
class RunPlan:
    """One run, as the stage needs it: where to build the new root, which interpreter to
    show inside (its installation directory is bound read-only at the same path), the
    program's file, the pipe the stage reports the program's end on, the host directory the
    files of `./out/` are copied to (`outputs`), at most `out_files` of them and `out_bytes`
    in all, and the packages offered besides the standard library (`packages`: their host
    paths, bound into `site`, the interpreter's site-packages). A `shell` run is a POSIX
    shell script rather than a Python program, and sees `workspace` (a host folder, the
    visible files of its session's workspace copied for it) read-only in ./workspace/."""

    limits: SandboxLimits
    root: str
    program: str
    python: str
    python_prefix: str
    status_fd: int
    out: str = ""
    out_files: int = OUT_FILES
    out_bytes: int = SCRATCH_MB * 1_048_576
    site: str = ""
    packages: tuple[str, ...] = ()
    shell: bool = False
    workspace: str = ""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RunPlan:
        raw: dict[str, Any] = json.loads(text)
        raw["limits"] = SandboxLimits(**raw["limits"])
        raw["packages"] = tuple(raw.get("packages", ()))
        return cls(**raw)
