"""The image's pages load their scripts: the Dockerfile's `assets` and `build` stages are run
here step by step (tests/support/dockerfile.py: this machine's npm and uv stand for the stages'
images), and the `parley web` of the virtualenv the build stage made, which is what the image
ships (its ffmpeg too), serves `/` and `/admin` to a real headless Chromium: every browser
library each page uses runs there, and the console holds no error (no refused, missing or
broken script)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from tests.fakes.llm import FakeLLM
from tests.support.browser import severe_logs, wait_for
from tests.support.dockerfile import run_stage, stages
from tests.support.redis_server import free_port
from tests.support.stack import stack_env
from tests.support.web_process import web_process

pytestmark = pytest.mark.e2e

# What each page's libraries define once they ran (github.min.css: a style sheet it holds).
CHAT = {
    "marked.umd.js": "typeof marked.parse === 'function'",
    "purify.min.js": "typeof DOMPurify.sanitize === 'function'",
    "highlight.min.js": "typeof hljs.highlight === 'function'",
    "github.min.css": "[...document.styleSheets].some(s => s.href && s.href.endsWith("
    "'/github.min.css') && s.cssRules.length > 0)",
}
ADMIN = {"chart.umd.min.js": "typeof window.Chart === 'function'"}


def image_virtualenv(root: Path) -> Path:
    """The `assets` then the `build` stage run under `root`; the virtualenv the image takes.
    uv resolves nothing anew: offline, from this machine's cache (filled by `make sync`), with
    this Python standing for the base image's. Bytecode is left uncompiled, which changes no
    page and saves a minute of a busy machine."""
    found = stages()
    built = {"assets": root / "assets"}
    run_stage(found["assets"], built["assets"], {})
    env = {"UV_OFFLINE": "1", "UV_PYTHON": sys.executable, "UV_COMPILE_BYTECODE": "0"}
    run_stage(found["build"], root / "build", built, env)
    venv = root / "build" / "app" / ".venv"
    assert (venv / "bin" / "parley").exists(), "the build stage made no `parley`"
    return venv


def ffmpeg_encoders(venv: Path) -> str:
    done = subprocess.run(
        [venv / "bin" / "ffmpeg", "-hide_banner", "-encoders"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def ran(browser: WebDriver, checks: dict[str, str]) -> list[str] | None:
    """The libraries whose check holds on the page, once all of them do."""
    held = [name for name, check in checks.items() if browser.execute_script(f"return {check}")]
    return held if len(held) == len(checks) else None


async def test_the_images_pages_run_every_library_they_load_in_chromium(
    redis_url: str, fake_llm: FakeLLM, tmp_path: Path, browser: WebDriver
) -> None:
    venv = await asyncio.to_thread(image_virtualenv, tmp_path)
    # the image's ffmpeg (the static one in the virtualenv) makes the Opus voice notes become
    assert " libopus " in await asyncio.to_thread(ffmpeg_encoders, venv)
    env = stack_env(redis_url, fake_llm, f"sqlite+aiosqlite:///{tmp_path}/parley.db")
    env |= {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}
    env["PARLEY_HTTP_PORT"] = str(free_port())
    for name in ("PYTHONPATH", "PARLEY_TOOL_MODULES"):  # the checkout's, not the image's
        del env[name]
    log = tmp_path / "web.log"
    parley = [str(venv / "bin" / "parley"), "web"]
    async with web_process(env, tmp_path, log, command=parley) as base:
        shown = {}
        for path, checks in (("/", CHAT), ("/admin", ADMIN)):
            await asyncio.to_thread(browser.get, base + path)
            shown[path] = await wait_for(browser, partial(ran, checks=checks), f"{path} runs")
            assert await asyncio.to_thread(severe_logs, browser) == [], path
    assert shown == {"/": list(CHAT), "/admin": list(ADMIN)}
    logged = await asyncio.to_thread(log.read_text)
    assert " ERROR " not in logged and " WARNING " not in logged, logged
