"""A wheel built from the checkout runs as the checkout does: it holds the persona's bootstrap
files and the pages' browser libraries, the installed package finds them (from its own
folder, not the checkout's), and its `parley web` serves the same pages and files, with no
error and no warning about a missing file.

The wheel is installed into a fresh virtualenv, offline: first the versions uv.lock pins
(exported as a pylock.toml, read from uv's cache), then the wheel itself, whose declared
dependencies must then be satisfied by them."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from adapters.http.pages import VENDOR, vendor_files
from bot.agent.prompt import BOOTSTRAP_FILES, load_bootstrap
from tests.fakes.llm import FakeLLM
from tests.support.redis_server import free_port
from tests.support.stack import ROOT, stack_env
from tests.support.web_process import web_process

PAGES = {
    "/": ROOT / "adapters" / "http" / "chat.html",
    "/admin": VENDOR.parent / "admin.html",
    "/admin/people": VENDOR.parent / "people.html",
    "/admin/lab": VENDOR.parent / "lab.html",
    "/admin/tasks": VENDOR.parent / "tasks.html",
}
# what the pages load from /static/ besides the libraries, every one the checkout has (the
# web chat's modules under chat/ too): the wheel serves them all
SCRIPTS = tuple(
    sorted(
        path.relative_to(VENDOR.parent).as_posix()
        for path in VENDOR.parent.rglob("*")
        if path.is_file() and not {"vendor", "__pycache__"} & set(path.parts)
    )
)


@dataclass
class Installed:
    wheel: set[str]  # the names in the wheel
    venv: Path


def run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"{command} failed: {done.stderr}"
    return done.stdout


def bare_env() -> dict[str, str]:
    """The environment of a program of the installed wheel: nothing that points at the
    checkout or its virtualenv."""
    return {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}


@pytest.fixture
def installed(tmp_path: Path) -> Installed:
    uv = os.environ.get("UV") or shutil.which("uv")
    if uv is None:
        pytest.fail("uv is needed to build the wheel (make test installs it)")
    run(uv, "build", "--wheel", "--out-dir", tmp_path / "dist", cwd=ROOT)
    [wheel] = (tmp_path / "dist").glob("*.whl")
    lock = tmp_path / "pylock.toml"
    export = ("export", "--frozen", "--no-dev", "--no-emit-project", "--format", "pylock.toml")
    run(uv, *export, "--quiet", "--output-file", lock, cwd=ROOT)
    venv = tmp_path / "venv"
    run(uv, "venv", "--quiet", venv, "--python", sys.executable, cwd=tmp_path)
    target = ("--offline", "--python", venv / "bin" / "python")
    run(uv, "pip", "install", "--quiet", *target, "-r", lock, cwd=tmp_path)
    run(uv, "pip", "install", "--quiet", *target, wheel, cwd=tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        return Installed(set(archive.namelist()), venv)


PROBE = """
import bot.agent.prompt as prompt
print(prompt.DEFAULT_DIR)
print(prompt.load_bootstrap(None), end="")
"""


async def test_an_installed_wheel_has_the_persona_and_serves_the_same_pages(
    installed: Installed, redis_url: str, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    for name in BOOTSTRAP_FILES:
        assert f"bootstrap/{name}" in installed.wheel
    for name in vendor_files():
        assert f"adapters/http/static/vendor/{name}" in installed.wheel
    python, parley = installed.venv / "bin" / "python", installed.venv / "bin" / "parley"
    said = await asyncio.to_thread(run, python, "-c", PROBE, cwd=tmp_path, env=bare_env())
    where, _, persona = said.partition("\n")
    assert Path(where).is_relative_to(installed.venv) and persona == load_bootstrap(None)

    env = stack_env(redis_url, fake_llm, f"sqlite+aiosqlite:///{tmp_path}/parley.db")
    env |= bare_env() | {"PARLEY_HTTP_PORT": str(free_port())}
    for name in ("PYTHONPATH", "PARLEY_TOOL_MODULES"):  # the checkout's, not the wheel's
        del env[name]
    log = tmp_path / "web.log"
    async with (
        web_process(env, tmp_path, log, command=[str(parley), "web"]) as base,
        httpx.AsyncClient(base_url=base, timeout=30) as client,
    ):
        pages = {path: await client.get(path) for path in PAGES}
        files = {name: await client.get(f"/static/vendor/{name}") for name in vendor_files()}
        scripts = {name: await client.get(f"/static/{name}") for name in SCRIPTS}
    for path, answer in pages.items():
        assert answer.status_code == 200 and answer.content == PAGES[path].read_bytes()
    for name, answer in files.items():
        assert answer.status_code == 200 and answer.content == (VENDOR / name).read_bytes()
    for name, answer in scripts.items():
        assert answer.status_code == 200 and answer.content == (VENDOR.parent / name).read_bytes()
    logged = await asyncio.to_thread(log.read_text)
    assert " ERROR " not in logged and " WARNING " not in logged, logged
