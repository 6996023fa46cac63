"""What a newcomer runs works on a fresh machine: `make run` installs only what running needs,
`make test` also what the tests need; every command the README shows goes through make (uv is
installed in ~/.local/bin, which a fresh shell's PATH does not have); apt-get waits for another
apt (unattended upgrades, on a first boot) instead of failing."""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# What a fresh Debian machine has besides make and python3 (the README asks for both), and
# Docker, which the README's deploying section is about.
FRESH = {"cp", "echo", "docker"}
# Not on a fresh shell's PATH: uv is in ~/.local/bin, the others in the project's virtualenv
# (and Debian has python3, no `python`).
NOT_ON_PATH = {"uv", "uvx", "python", "pytest", "ruff", "mypy"}
SEPARATORS = {"|", "||", "&&", ";", "&"}
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


def shell_commands(page: Path) -> list[list[str]]:
    """Each simple command of the page's shell blocks, as words, its variable assignments
    left out (`PYTEST_WORKERS=1 make test` is `make test`); a pipeline is one per part."""
    blocks = re.findall(r"^```(?:sh|bash|shell)\n(.*?)^```", page.read_text(), re.M | re.S)
    commands: list[list[str]] = []
    line = ""
    for more in "\n".join(blocks).replace("\\\n", " ").splitlines():
        line += more
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            split = [*lexer, ";"]
        except ValueError:  # a quotation going on to the next line
            line += "\n"
            continue
        line, words = "", []
        for word in split:
            if word not in SEPARATORS:
                words.append(word)
                continue
            while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0], re.S):
                words.pop(0)
            if words:
                commands.append(words)
            words = []
    return commands


def test_every_command_the_readme_shows_works_on_a_fresh_machine() -> None:
    """After `make run` or `make test`, in a new shell: a make target that exists, or a
    program the machine has."""
    commands = shell_commands(ROOT / "README.md")
    assert ["make", "run"] in commands and ["docker", "compose", "up", "--build", "-d"] in commands
    for words in commands:
        assert words[0] == "make" or words[0] in FRESH, shlex.join(words)
        if words[0] == "make":
            (target,) = [word for word in words[1:] if "=" not in word]
            dry_run(target, *[word for word in words[1:] if "=" in word])


def test_no_page_tells_anyone_to_run_what_a_fresh_shell_cannot_find() -> None:
    """Not in a shell block of any page, nor as `uv run …` in its text; the README names no
    such command at all (the docs' prose may name the modules a benchmark runs)."""
    for page in PAGES:
        for words in shell_commands(page):
            assert words[0] not in NOT_ON_PATH, f"{page.name}: {shlex.join(words)}"
        for code in re.findall(r"`([^`\n]+)`", page.read_text()):
            assert not code.startswith("uv "), f"{page.name}: {code}"
            if page.name == "README.md":
                assert code.split()[0] not in NOT_ON_PATH, code


def test_the_readme_commands_run_in_the_virtualenv() -> None:
    """`make chat`, `make fake-llm` and `make pytest` run Parley, the fake model and pytest
    through uv, found by its path; the fake on the port the README's demo uses."""
    assert re.search(r"/uv run --frozen parley chat$", dry_run("chat"), re.M)
    assert re.search(
        r"/uv run --frozen python -m tests.fakes.llm --port 9999$", dry_run("fake-llm"), re.M
    )
    pytest_run = dry_run("pytest", "PYTEST_ARGS=tests/integration/slack -q")
    assert re.search(r"/uv run --frozen pytest tests/integration/slack -q$", pytest_run, re.M)
    assert "postgresql" in pytest_run  # what any test may need, as for `make test`
    assert re.search(
        r"/uv run --frozen parley doctor --model$", dry_run("parley", "ARGS=doctor --model"), re.M
    )


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
