"""The pages and their browser libraries: every page sent with one Content-Security-Policy,
every library they load listed in `adapters/http/vendor.txt` and served; and a web process
whose install lacks the libraries (a copy of the code without `make assets`) says so once in
its log and in the text of each page, in a real Chromium, instead of serving a blank page."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import httpx
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from adapters.http.pages import USES, VENDOR, vendor_files
from tests.fakes.llm import FakeLLM
from tests.support.browser import screenshot, wait_for
from tests.support.redis_server import free_port
from tests.support.stack import ROOT, Stack, stack_env
from tests.support.web_process import web_process

CHAT_LIBRARIES = ["marked.umd.js", "purify.min.js", "highlight.min.js", "github.min.css"]
ADMIN_LIBRARIES = ["chart.umd.min.js"]


async def test_the_pages_have_one_policy_and_every_library_they_load(stack: Stack) -> None:
    async with stack.client() as client:
        chat, admin = await client.get("/"), await client.get("/admin")
        people = await client.get("/admin/people")
        lab = await client.get("/admin/lab")
        loaded = sorted(set(USES.findall(chat.text) + USES.findall(admin.text)))
        served = {name: await client.get(f"/static/vendor/{name}") for name in loaded}
    assert chat.status_code == admin.status_code == people.status_code == lab.status_code == 200
    policy = chat.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert admin.headers["Content-Security-Policy"] == policy
    assert people.headers["Content-Security-Policy"] == policy
    assert lab.headers["Content-Security-Policy"] == policy
    assert USES.findall(people.text) == []  # the people page loads no library
    assert USES.findall(lab.text) == []  # nor the lab
    assert chat.headers["X-Content-Type-Options"] == "nosniff"
    assert "missing-assets" not in chat.text and "missing-assets" not in admin.text
    assert loaded == sorted(vendor_files()) == sorted(CHAT_LIBRARIES + ADMIN_LIBRARIES)
    for name, answer in served.items():
        assert answer.status_code == 200 and answer.content == (VENDOR / name).read_bytes()


def code_without_libraries(into: Path) -> Path:
    """Parley's packages copied to `into`, as an install that never ran `make assets`."""
    vendor = ROOT / "adapters" / "http" / "static" / "vendor"

    def left_out(folder: str, names: list[str]) -> set[str]:
        skipped = {name for name in names if name == "__pycache__"}
        return skipped | ({"vendor"} if Path(folder) == vendor.parent else set())

    for package in ("bot", "adapters", "worker"):
        shutil.copytree(ROOT / package, into / package, ignore=left_out)
    assert not (into / "adapters" / "http" / "static" / "vendor").exists()
    return into


def notice(browser: WebDriver) -> str | None:
    shown = browser.find_elements(By.ID, "missing-assets")
    return str(shown[0].text) if shown and shown[0].is_displayed() else None


async def test_a_web_process_without_the_libraries_says_what_is_missing(
    redis_url: str, fake_llm: FakeLLM, tmp_path: Path, browser: WebDriver
) -> None:
    code = code_without_libraries(tmp_path / "app")
    env = stack_env(
        redis_url,
        fake_llm,
        f"sqlite+aiosqlite:///{tmp_path}/parley.db",
        PARLEY_HTTP_PORT=str(free_port()),
        PYTHONPATH=str(code),
    )
    del env["PARLEY_TOOL_MODULES"]  # the tests' tools are not in the copy
    log = tmp_path / "web.log"
    command = [sys.executable, "-m", "worker", "web"]
    async with web_process(env, code, log, command=command) as base:
        async with httpx.AsyncClient(base_url=base, timeout=30) as client:
            chat, admin = await client.get("/"), await client.get("/admin")
        await asyncio.to_thread(browser.get, base + "/")
        on_chat = await wait_for(browser, notice, "the notice on /")
        await asyncio.to_thread(screenshot, browser, "missing-libraries-chat.png")
        await asyncio.to_thread(browser.get, base + "/admin")
        on_admin = await wait_for(browser, notice, "the notice on /admin")
        await asyncio.to_thread(screenshot, browser, "missing-libraries-admin.png")
    said = await asyncio.to_thread(log.read_text)
    [error] = [line for line in said.splitlines() if " ERROR " in line]
    assert str(code / "adapters" / "http" / "static" / "vendor") in error
    for name in CHAT_LIBRARIES + ADMIN_LIBRARIES:
        assert name in error
    for page, wanted, shown in (
        (chat, CHAT_LIBRARIES, on_chat),
        (admin, ADMIN_LIBRARIES, on_admin),
    ):
        assert page.status_code == 200 and "Content-Security-Policy" in page.headers
        assert shown.startswith("This page cannot work") and "make assets" in shown
        assert [name for name in CHAT_LIBRARIES + ADMIN_LIBRARIES if name in shown] == wanted
