"""The web chat page in a real headless Chromium: a streamed reply, an approval press, the
API token asked for, kept in the browser and sent on every call, and a cut stream resumed."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.redis_server import RedisServer
from tests.support.stack import Stack

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=900,700",
)


@pytest.fixture
def browser() -> Iterator[WebDriver]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.fail("chromium and chromedriver are needed (make test installs them)")
    options = Options()
    options.binary_location = chromium
    for flag in FLAGS:
        options.add_argument(flag)
    with webdriver.Chrome(service=Service(driver), options=options) as chrome:
        yield chrome


T = TypeVar("T")


async def wait_for(
    browser: WebDriver, probe: Callable[[WebDriver], T], what: str, limit: float = 20
) -> T:
    """The first truthy value of `probe` on the page, polled for a generous while."""
    started = time.monotonic()
    while not (found := await asyncio.to_thread(probe, browser)):
        if time.monotonic() - started > limit:
            shown = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".msg")]
            raise AssertionError(f"{what}: not seen; the page shows {shown}")
        await asyncio.sleep(0.1)
    return found


async def wait_for_text(browser: WebDriver, text: str, limit: float = 20) -> list[str]:
    started = time.monotonic()
    while True:
        shown = await asyncio.to_thread(
            lambda: [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".msg")]
        )
        if any(text in item for item in shown):
            return shown
        if time.monotonic() - started > limit:
            raise AssertionError(f"{text!r} not shown; the page shows {shown}")
        await asyncio.sleep(0.1)


@pytest.mark.parametrize(
    "stack", [{"PARLEY_POLICY": '[{"action": "ask", "tool": "calculator"}]'}], indirect=True
)
async def test_chat_page_streams_and_asks(stack: Stack, browser: WebDriver) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(text="Hello! Nice to meet you.", chunk_size=3, delay=0.01),
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text="It is 42."),
    )

    def type_message(text: str) -> None:
        browser.find_element(By.ID, "text").send_keys(text)
        browser.find_element(By.ID, "send").click()

    await asyncio.to_thread(browser.get, stack.base_url + "/")
    await asyncio.to_thread(type_message, "hello")
    await wait_for_text(browser, "Hello! Nice to meet you.")
    await asyncio.to_thread(type_message, "what is 6*7?")
    await wait_for_text(browser, 'Allow calculator {"expression":"6*7"}?')
    buttons = await asyncio.to_thread(browser.find_elements, By.CSS_SELECTOR, ".ask button")
    assert [b.text for b in buttons] == ["Approve", "Deny"]
    await asyncio.to_thread(buttons[0].click)
    shown = await wait_for_text(browser, "It is 42.")
    assert "→ 42" in shown
    assert shown[0] == "hello" and "Approved." in " ".join(shown)
    assert stack.fake.requests[2].tool_results()[0][1] == "42"


@pytest.mark.parametrize(
    "stack",
    [
        {
            "PARLEY_POLICY": '[{"action": "ask", "tool": "calculator"}]',
            "PARLEY_CONFIRMATION_TTL": "5",
        }
    ],
    indirect=True,
)
async def test_chat_page_shows_the_turn_going_on_after_an_expiry(
    stack: Stack, browser: WebDriver
) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "2+2"})]),
        Reply(text="Nobody approved, so I did not calculate."),
    )
    await asyncio.to_thread(browser.get, stack.base_url + "/")
    await asyncio.to_thread(browser.find_element(By.ID, "text").send_keys, "2+2?")
    await asyncio.to_thread(browser.find_element(By.ID, "send").click)
    await wait_for_text(browser, 'Allow calculator {"expression":"2+2"}?')
    await wait_for_text(browser, "Nobody approved, so I did not calculate.", limit=30)
    buttons = await asyncio.to_thread(browser.find_elements, By.CSS_SELECTOR, ".ask button")
    assert buttons == []  # an expired request cannot be pressed any more
    result = stack.fake.requests[1].tool_results()[0][1]
    assert result == "Not run: nobody approved it before the request expired."


TOKEN = "s3cret-token-for-the-test"


def token_note(browser: WebDriver) -> str:
    """The page's question for the token, when it shows one."""
    form = browser.find_element(By.ID, "auth")
    return str(form.text) if form.is_displayed() else ""


def kept_token(browser: WebDriver) -> object:
    return browser.execute_script("return localStorage.getItem('parley.apiToken')")


def give_token(browser: WebDriver, token: str) -> None:
    browser.find_element(By.ID, "token").send_keys(token)
    browser.find_element(By.ID, "unlock").click()


@pytest.mark.parametrize(
    "stack",
    [{"PARLEY_API_TOKEN": TOKEN, "PARLEY_POLICY": '[{"action": "ask", "tool": "calculator"}]'}],
    indirect=True,
)
async def test_chat_page_asks_for_the_token_and_keeps_it(stack: Stack, browser: WebDriver) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(text="Hello with a token.", chunk_size=3, delay=0.01),
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text="It is 42."),
    )
    await asyncio.to_thread(browser.get, stack.base_url + "/")
    note = await wait_for(browser, token_note, "the question for the token")
    assert "PARLEY_API_TOKEN" in note and "refused" not in note

    await asyncio.to_thread(give_token, browser, "not-the-token")
    await wait_for(browser, lambda b: "refused" in token_note(b), "the wrong token refused")
    assert await asyncio.to_thread(kept_token, browser) is None

    await asyncio.to_thread(give_token, browser, TOKEN)
    await asyncio.to_thread(browser.find_element(By.ID, "text").send_keys, "hello")
    await asyncio.to_thread(browser.find_element(By.ID, "send").click)
    await wait_for_text(browser, "Hello with a token.")
    assert await asyncio.to_thread(kept_token, browser) == TOKEN

    # Opened again: the kept token is sent, nothing is asked, and the streams carry it too
    # (the turn after the approval is followed on the session's event stream).
    await asyncio.to_thread(browser.refresh)
    await asyncio.to_thread(browser.find_element(By.ID, "text").send_keys, "what is 6*7?")
    await asyncio.to_thread(browser.find_element(By.ID, "send").click)
    await wait_for_text(browser, 'Allow calculator {"expression":"6*7"}?')
    buttons = await asyncio.to_thread(browser.find_elements, By.CSS_SELECTOR, ".ask button")
    await asyncio.to_thread(buttons[0].click)
    shown = await wait_for_text(browser, "It is 42.")
    assert "Approved." in " ".join(shown) and "error" not in " ".join(shown).lower()
    assert await asyncio.to_thread(token_note, browser) == ""
    assert len(stack.fake.requests) == 3


async def test_chat_page_shows_text_that_looks_like_html_as_text(
    stack: Stack, browser: WebDriver
) -> None:
    """Nothing the model writes is dropped, and nothing becomes markup in the page."""
    await stack.start_worker()
    text = (
        "2. second item with <angle> & ampersand &amp; "
        "<img src=x onerror=\"document.title='injected'\"> <b>not bold</b>"
    )
    stack.fake.enqueue(Reply(text=text, chunk_size=5, delay=0.01))
    await asyncio.to_thread(browser.get, stack.base_url + "/")
    await asyncio.to_thread(browser.find_element(By.ID, "text").send_keys, "say it")
    await asyncio.to_thread(browser.find_element(By.ID, "send").click)
    shown = await wait_for_text(browser, "<b>not bold</b>")
    assert shown[-1] == text
    injected = await asyncio.to_thread(browser.find_elements, By.CSS_SELECTOR, "#log img, #log b")
    assert injected == []
    assert "injected" not in await asyncio.to_thread(lambda: browser.title)


async def test_chat_page_resumes_a_stream_cut_by_a_redis_restart(
    own_stack: tuple[Stack, RedisServer], browser: WebDriver
) -> None:
    """The page acts on the `error` event that ends a cut stream: it follows the session from
    the last event it showed, and the reply finishes in the same bubble, shown once."""
    stack, server = own_stack
    await stack.start_worker()
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(text="Cut short by a restart", chunk_size=4, gate=gate, gate_after=4),
        Reply(text="The whole answer."),
    )
    await asyncio.to_thread(browser.get, stack.base_url + "/")
    await asyncio.to_thread(browser.find_element(By.ID, "text").send_keys, "go")
    await asyncio.to_thread(browser.find_element(By.ID, "send").click)
    await wait_for(browser, lambda b: bot_texts(b) and bot_texts(b)[-1], "the first words")

    await asyncio.to_thread(server.stop)
    await wait_for_text(browser, "reconnecting", limit=60)
    await asyncio.to_thread(server.start)
    gate.set()
    shown = await wait_for(browser, finished, "the whole reply after the restart", limit=90)
    # The turn went on where it was or, if the restart cost its worker the turn, started
    # over after a `reset`: either way one bubble holds one whole answer.
    assert shown in (["Cut short by a restart"], ["The whole answer."])
    assert await asyncio.to_thread(browser.find_elements, By.CSS_SELECTOR, ".msg.error") == []


def bot_texts(browser: WebDriver) -> list[str]:
    return [str(e.text) for e in browser.find_elements(By.CSS_SELECTOR, ".msg.bot")]


def finished(browser: WebDriver) -> list[str] | None:
    """The replies shown once the reconnecting note is gone and the stop button is off."""
    note = browser.find_elements(By.CSS_SELECTOR, ".msg.note")
    stop = browser.find_element(By.ID, "stop")
    return None if note or stop.is_enabled() else bot_texts(browser)
