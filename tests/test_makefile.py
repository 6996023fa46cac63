"""`make run` installs only what running needs; `make test` also what the tests need."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEST_ONLY = ("chromium", "chromedriver", "chromium-driver", "postgresql", "initdb")


def dry_run(target: str, *flags: str) -> str:
    """The commands `make TARGET` would run, without running them."""
    make = shutil.which("make")
    if make is None:
        pytest.fail("make is not installed")
    done = subprocess.run(
        [make, "-n", *flags, "-C", str(ROOT), target], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_run_installs_only_redis() -> None:
    commands = dry_run("run")
    assert "redis-server" in commands and "apt-get install" in commands
    assert [word for word in TEST_ONLY if word in commands] == []


def test_test_installs_what_the_tests_need() -> None:
    commands = dry_run("test")
    for word in ("redis-server", "chromium", "chromium-driver", "chromedriver", "postgresql"):
        assert word in commands


def test_assets_are_installed_by_the_script_the_docker_image_runs() -> None:
    """One list of the pages' libraries (adapters/http/vendor.txt), one script copying them
    (web/vendor.sh, also run by the Dockerfile): the Makefile names neither file itself."""
    commands = dry_run("assets", "--always-make")
    assert "sh web/vendor.sh" in commands
    assert "node_modules" not in commands and "npm ci" not in commands
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "RUN sh web/vendor.sh" in dockerfile


def test_running_and_the_image_have_ffmpeg_for_voice_notes() -> None:
    assert "ffmpeg" in dry_run("run") and "ffmpeg" in dry_run("test")
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert "apt-get install" in dockerfile and "ffmpeg" in dockerfile
