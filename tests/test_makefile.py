"""`make run` installs only what running needs; `make test` also what the tests need; apt-get
waits for another apt (unattended upgrades, on a first boot) instead of failing."""

from __future__ import annotations

import fcntl
import os
import re
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


APT_CALL = re.compile(r"(\S*apt-get)((?:\s+-\S+)*)\s+(update|install)\b")


def test_every_apt_get_goes_through_the_wrapper_that_waits() -> None:
    """The Makefile's and CI's package installs, `update` and `install` alike."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for text in (dry_run("system-test", "--always-make"), dry_run("system-run"), ci):
        calls = APT_CALL.findall(text)
        assert {verb for _, _, verb in calls} == {"update", "install"}
        assert {program for program, _, _ in calls} == {".ci/apt-get"}
    wrapper = (ROOT / ".ci" / "apt-get").read_text(encoding="utf-8")
    assert "-o DPkg::Lock::Timeout=" in wrapper


def apt_alone(tmp_path: Path) -> dict[str, str]:
    """The environment for an apt-get with a state and configuration of its own in
    `tmp_path` (APT_CONFIG is read before the machine's files, and names none of them), and
    no sources: `update` and `install` run without root, the network or the machine's hooks."""
    for folder in ("apt.conf.d", "lists/partial", "cache/archives/partial", "sources.list.d"):
        (tmp_path / folder).mkdir(parents=True)
    for file in ("status", "sources.list"):
        (tmp_path / file).touch()
    places = {
        "Dir::Etc::Parts": "apt.conf.d",
        "Dir::Etc::Main": "no-apt.conf",
        "Dir::State::Lists": "lists",
        "Dir::Cache": "cache",
        "Dir::State::status": "status",
        "Dir::Etc::SourceList": "sources.list",
        "Dir::Etc::SourceParts": "sources.list.d",
    }
    config = tmp_path / "apt.conf"
    config.write_text("".join(f'{name} "{tmp_path / place}";\n' for name, place in places.items()))
    return {**os.environ, "APT_CONFIG": str(config)}


def test_apt_get_waits_while_another_apt_holds_the_lists_lock(tmp_path: Path) -> None:
    """As unattended upgrades do on a first boot. DPkg::Lock::Timeout covers dpkg's lock,
    not this one: the wrapper tries `update` again until it is free."""
    if shutil.which("apt-get") is None:
        pytest.fail("apt-get is not installed")
    env = apt_alone(tmp_path)
    lock = os.open(tmp_path / "lists" / "lock", os.O_RDWR | os.O_CREAT, 0o640)
    fcntl.lockf(lock, fcntl.LOCK_EX)
    wrapper = subprocess.Popen(
        ["sh", str(ROOT / ".ci" / "apt-get"), "update", "-qq"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wrapper.stderr is not None
        said = wrapper.stderr.readline()
        assert said.startswith("apt-get: another apt holds its lock; waiting"), said
    finally:
        os.close(lock)  # the other apt is done
    assert wrapper.wait(timeout=60) == 0, wrapper.stderr.read()


def test_apt_get_gives_up_at_once_on_any_other_failure(tmp_path: Path) -> None:
    if shutil.which("apt-get") is None:
        pytest.fail("apt-get is not installed")
    done = subprocess.run(
        ["sh", str(ROOT / ".ci" / "apt-get"), "install", "-y", "no-such-pkg"],
        env=apt_alone(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 100
    assert "Unable to locate package no-such-pkg" in done.stderr and "waiting" not in done.stderr
