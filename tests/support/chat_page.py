"""What the web chat's tests read of the page and do in it, in a real Chromium (the `browser`
fixture and the waits are `tests.support.browser`'s).

The page's parts are found by the selectors the page gives them: `.msg` for every message
(`.user`, `.bot`, `.tool`, `.error`, `.note`), `.ask` for an approval card, `.plan` for a
plan checklist, `#conversations .conversation` for the list of conversations.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

SESSION_KEY = "parley.chat.session"
T = TypeVar("T")


def shown(browser: WebDriver) -> list[str]:
    """The text of every message in the conversation shown."""
    return [str(e.text) for e in browser.find_elements(By.CSS_SELECTOR, "#log .msg")]


async def run(browser: WebDriver, action: Callable[..., T], *args: Any) -> T:
    """A WebDriver call, off the event loop the stack's web app and workers run in."""
    return await asyncio.to_thread(action, *args)


def type_message(browser: WebDriver, text: str) -> None:
    browser.find_element(By.ID, "text").send_keys(text)
    browser.find_element(By.ID, "send").click()


async def say(browser: WebDriver, text: str) -> None:
    await run(browser, type_message, browser, text)


def script(browser: WebDriver, code: str, *args: Any) -> Any:
    return browser.execute_script(code, *args)


def current_session(browser: WebDriver) -> str | None:
    """The conversation the page keeps open (its session id, without `http:`)."""
    found = browser.execute_script(f"return localStorage.getItem('{SESSION_KEY}')")
    return None if found is None else str(found)


def idle(browser: WebDriver) -> bool:
    """No stream open: the stop button is off (it is on while any stream of the page runs)."""
    return not browser.find_element(By.ID, "stop").is_enabled()


def tool_cards(browser: WebDriver) -> list[dict[str, Any]]:
    """Every tool card as the DOM has it: name, status line, arguments, result and its label,
    which of its parts are open, whether it failed, and its visible text."""
    return script(  # type: ignore[no-any-return]
        browser,
        """return [...document.querySelectorAll('#log .msg.tool')].map(card => ({
            name: card.querySelector('.tool-name').textContent,
            status: card.querySelector('.tool-status').textContent,
            args: JSON.parse(card.querySelector('.tool-args pre').textContent),
            result: card.querySelector('.tool-result pre')?.textContent ?? null,
            label: card.querySelector('.tool-result summary')?.textContent ?? null,
            open: [...card.querySelectorAll('details')].map(d => d.open),
            failed: card.classList.contains('failed'),
            visible: card.innerText}));""",
    )
