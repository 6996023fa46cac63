"""The Dockerfile read as the tests need it: its stages by name, each a list of steps.

No Docker engine runs the tests, so what the image promises (its pinned bases, its user, what
its last stage installs) is checked on the file's steps, parsed here once for all of them; and
the stages that make files (`assets`, `build`) are run here step by step, in a folder standing
for the stage's root, with this machine's node, npm and uv instead of the stages' images."""

from __future__ import annotations

import fnmatch
import os
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
LAST = "image"  # the name given to the last stage, which is unnamed: the image that ships

Step = tuple[str, str]  # (instruction in capitals, its arguments)


def stages(path: Path = DOCKERFILE) -> dict[str, list[Step]]:
    """The stages by name (`image` for the last, unnamed one), each its steps, FROM first;
    lines continued with a backslash are joined, comments left out."""
    text = path.read_text(encoding="utf-8").replace("\\\n", " ")
    found: dict[str, list[Step]] = {}
    steps: list[Step] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        instruction, _, args = line.strip().partition(" ")
        if instruction.upper() == "FROM":
            _, _, name = args.partition(" AS ")
            steps = found.setdefault(name.strip() or LAST, [])
        steps.append((instruction.upper(), " ".join(args.split())))
    return found


def base(steps: list[Step]) -> str:
    """The image a stage starts from (its FROM line without the stage's name)."""
    return steps[0][1].split(" AS ")[0].strip()


def ignored(path: str) -> bool:
    """Whether `.dockerignore` keeps `path` (or a folder holding it) out of the build."""
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    parts = PurePosixPath(path).parts
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(fnmatch.fnmatch(p, pattern) for p in prefixes for pattern in patterns)


def _copy(source: Path, into: Path) -> None:
    """A file or folder of the build context, less what `.dockerignore` leaves out."""
    if source.is_file():
        into.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, into)
        return

    def left_out(folder: str, names: list[str]) -> set[str]:
        here = Path(folder).relative_to(ROOT)
        return {name for name in names if ignored(str(here / name))}

    shutil.copytree(source, into, ignore=left_out, dirs_exist_ok=True)


def _copy_step(args: str, root: Path, workdir: Path, built: dict[str, Path]) -> None:
    *sources, dest = args.split()
    origin = ROOT
    if sources[0].startswith("--from="):
        origin = built[sources.pop(0).removeprefix("--from=")]
    target = root / dest.lstrip("/") if dest.startswith("/") else workdir / dest
    for source in sources:
        assert origin != ROOT or not ignored(source), f"{source} is left out by .dockerignore"
        path = origin / source.lstrip("/")
        into = target / path.name if dest.endswith("/") else target
        if origin == ROOT:
            _copy(path, into)
        else:
            shutil.copytree(path, into)


def run_stage(
    steps: list[Step], root: Path, built: dict[str, Path], env: dict[str, str] | None = None
) -> None:
    """Run a stage's steps with `root` standing for its `/` (`built` holds the roots of the
    stages run before, for `COPY --from`). A RUN that installs system packages (apt-get) or
    uv (pip) is left to this machine, which has its own; every other step is run as the
    image's build would, its ENV pointed into `root`."""
    workdir, environment = root, dict(os.environ)
    for instruction, args in steps[1:]:
        if instruction == "WORKDIR":
            workdir = root / args.lstrip("/")
            workdir.mkdir(parents=True, exist_ok=True)
        elif instruction == "ARG":  # its default, as a build without --build-arg has it
            name, _, value = args.partition("=")
            environment[name] = value
        elif instruction == "ENV":
            for pair in args.split():
                name, _, value = pair.partition("=")
                environment[name] = str(root) + value if value.startswith("/") else value
        elif instruction == "COPY":
            _copy_step(args, root, workdir, built)
        elif instruction == "RUN":
            if "apt-get" in args or "pip install" in args:
                continue
            done = subprocess.run(
                ["sh", "-c", args],
                cwd=workdir,
                env=environment | (env or {}),
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, f"RUN {args} failed: {done.stdout}{done.stderr}"
        else:
            pytest.fail(f"a stage has a step this test does not run: {instruction}")
