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

import re
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

from adapters.http.pages import VENDOR, vendor_files
from tests.support.dockerfile import ignored, run_stage, stages

pytestmark = pytest.mark.e2e  # npm installs the packages

ROOT = Path(__file__).resolve().parents[1]
SYSTEM_CAS = "/etc/ssl/certs/ca-certificates.crt"


def test_the_image_serves_the_libraries_make_assets_installs(tmp_path: Path) -> None:
    found = stages()
    run_stage(found["assets"], tmp_path, {})
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


def test_the_build_stage_installs_the_uv_it_pins_by_its_hashes(tmp_path: Path) -> None:
    """The build stage's uv comes from PyPI by version and sha256: the step is run with the
    pip of a fresh virtualenv (as the base image's), from PyPI, ignoring this machine's pip
    settings; a hash PyPI does not list for the wheel makes pip refuse it."""
    [step] = [args for step, args in stages()["build"] if step == "RUN" and "uv==" in args]
    [version] = re.findall(r"uv==(\S+)", step)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=300)
    env = {
        "PATH": f"{venv}/bin:/usr/bin:/bin",
        "PIP_CONFIG_FILE": "/dev/null",
        "HOME": str(tmp_path),
    }
    if Path(SYSTEM_CAS).exists():  # the machine's authorities, which its network may need
        env["PIP_CERT"] = SYSTEM_CAS
    done = subprocess.run(
        ["sh", "-c", step.replace("/tmp/uv.txt", str(tmp_path / "uv.txt"))],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    said = subprocess.run([venv / "bin" / "uv", "--version"], capture_output=True, text=True)
    assert said.stdout.split()[:2] == ["uv", version]
