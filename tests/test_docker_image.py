"""The Docker image serves the same browser libraries as a checkout after `make assets`.

No Docker engine is needed: the Dockerfile's `assets` stage is read and its steps (WORKDIR,
COPY from the build context, RUN) are run here, in a folder standing for the stage's root, the
way the image's build would run them (with this machine's node and npm instead of the stage's
image). Then the build stage's `COPY --from=assets` must take from what the stage made exactly
the files `adapters/http/vendor.txt` lists, byte for byte the checkout's, into the folder the
pages are served from, before Parley's wheel is built into the virtualenv the image ships; and
`.dockerignore` must keep this machine's copies out of the build.
"""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

from adapters.http.pages import VENDOR, vendor_files
from tests.support.dockerfile import Step, stages

pytestmark = pytest.mark.e2e  # npm installs the packages

ROOT = Path(__file__).resolve().parents[1]


def ignored(path: str) -> bool:
    """Whether `.dockerignore` keeps `path` (or a folder holding it) out of the build."""
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    parts = PurePosixPath(path).parts
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(fnmatch.fnmatch(p, pattern) for p in prefixes for pattern in patterns)


def build(steps: list[Step], root: Path) -> None:
    """Run a stage's steps with `root` standing for its `/`."""
    workdir = root
    for instruction, args in steps[1:]:
        if instruction == "WORKDIR":
            workdir = root / args.lstrip("/")
            workdir.mkdir(parents=True, exist_ok=True)
        elif instruction == "COPY":
            *sources, dest = args.split()
            target = workdir / dest
            for source in sources:
                assert not ignored(source), f"{source} is left out of the build by .dockerignore"
                into = target / Path(source).name if dest.endswith("/") else target
                into.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / source, into)
        elif instruction == "RUN":
            done = subprocess.run(
                ["sh", "-c", args], cwd=workdir, capture_output=True, text=True, timeout=600
            )
            assert done.returncode == 0, f"RUN {args} failed: {done.stdout}{done.stderr}"
        else:
            pytest.fail(f"the assets stage has a step this test does not run: {instruction}")


def test_the_image_serves_the_libraries_make_assets_installs(tmp_path: Path) -> None:
    found = stages()
    build(found["assets"], tmp_path)
    build_stage = found["build"]
    copied = [i for i, (_, args) in enumerate(build_stage) if args.startswith("--from=assets ")]
    [at] = copied
    source, dest = build_stage[at][1].split()[1:]
    [workdir] = [args for step, args in build_stage if step == "WORKDIR"]
    assert ("COPY", "adapters adapters") in build_stage  # the package holding the pages
    # Parley goes into the virtualenv as a wheel once the libraries are in place (hatch_build.py
    # builds none without them), and the image takes that virtualenv.
    later = [args for step, args in build_stage[at:] if step == "RUN"]
    assert any("uv sync" in args and "--no-editable" in args for args in later)
    assert ("COPY", "--from=build /app/.venv /app/.venv") in found["image"]
    assert PurePosixPath(workdir, dest) == PurePosixPath(workdir, VENDOR.relative_to(ROOT))
    made = tmp_path / source.lstrip("/")
    assert sorted(path.name for path in made.iterdir()) == sorted(vendor_files())
    for name in vendor_files():
        assert (made / name).read_bytes() == (VENDOR / name).read_bytes(), name
    for local in ("web/node_modules/marked/package.json", f"{VENDOR.relative_to(ROOT)}/x.js"):
        assert ignored(local), f"{local} would reach the image from this machine"
