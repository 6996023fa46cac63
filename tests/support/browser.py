"""A real headless Chromium for the pages' tests (`browser` fixture), and the ways to wait on
what a page shows: polled on real signals with generous deadlines, since the machine may be
busy. The browser keeps its console, so a test can say no script failed (`severe_logs`), and a
test can keep a screenshot of what it saw under `test-artifacts/`."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chromium.webdriver import ChromiumDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.support.waiting import WITHIN, until

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
T = TypeVar("T")


@contextlib.contextmanager
def chromium(width: int = 900, height: int = 700) -> Iterator[WebDriver]:
    """Headless Chromium with its console log kept (every level)."""
    binary, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if binary is None or driver is None:
        pytest.fail("chromium and chromedriver are needed (make test installs them)")
    options = Options()
    options.binary_location = binary
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={width},{height}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    with webdriver.Chrome(service=Service(driver), options=options) as chrome:
        yield chrome


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    with chromium() as chrome:
        yield chrome


def page_text(browser: WebDriver, limit: int = 2000) -> str:
    """What the page shows, in short: for the message of a wait that ran out."""
    return str(browser.find_element(By.TAG_NAME, "body").text)[:limit]


async def wait_for(
    browser: WebDriver,
    probe: Callable[[WebDriver], T | None],
    what: str,
    limit: float = WITHIN,
    shown: Callable[[WebDriver], Any] = page_text,
) -> T:
    """The first truthy value of `probe` on the page, polled for a generous while; after
    `limit` s an AssertionError says what was awaited and what the page showed."""
    found: list[T] = []

    async def seen() -> bool:
        value = await asyncio.to_thread(probe, browser)
        if value:
            found.append(value)
        return bool(value)

    await until(seen, lambda: f"{what}; the page shows {shown(browser)!r}", limit, every=0.1)
    return found[0]


async def wait_for_text(
    browser: WebDriver, text: str, limit: float = WITHIN, selector: str = ".msg"
) -> list[str]:
    """The texts of the elements `selector` selects, once one of them holds `text`."""

    def texts(b: WebDriver) -> list[str]:
        return [str(e.text) for e in b.find_elements(By.CSS_SELECTOR, selector)]

    def holding(b: WebDriver) -> list[str] | None:
        shown = texts(b)
        return shown if any(text in item for item in shown) else None

    return await wait_for(browser, holding, f"{text!r} in {selector}", limit, texts)


def severe_logs(browser: WebDriver) -> list[dict[str, Any]]:
    """The console's SEVERE entries since the last call (script errors, failed loads, CSP
    refusals)."""
    assert isinstance(browser, ChromiumDriver), "only Chromium keeps its console for a test"
    entries: list[dict[str, Any]] = browser.get_log("browser")  # type: ignore[no-untyped-call]
    return [e for e in entries if e.get("level") == "SEVERE"]


def screenshot(browser: WebDriver, name: str) -> Path:
    """The page as a PNG in test-artifacts/, checked to be one."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    if not browser.save_screenshot(str(path)):
        raise AssertionError(f"no screenshot was written to {path}")
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 1000, f"{path} is not a PNG"
    return path
