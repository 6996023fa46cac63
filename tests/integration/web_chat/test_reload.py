"""A reload in the middle of a turn: the page shows the conversation as it stands, the turn
still running goes on in it, and an approval request still open can still be answered."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.browser import wait_for, wait_for_text
from tests.support.chat_page import current_session, idle, run, say, script, shown
from tests.support.stack import Stack, recorded

REPLY = "Begun before the reload, finished after it."


def kinds(browser: WebDriver) -> list[list[str]]:
    """Each message: its kind and its text."""
    return script(  # type: ignore[no-any-return]
        browser,
        """return [...document.querySelectorAll('#log .msg')].map(e =>
            [e.classList[1], e.innerText.trim()]);""",
    )


async def test_a_turn_running_at_a_reload_goes_on_in_the_page(
    stack: Stack, browser: WebDriver
) -> None:
    await stack.start_worker()
    gate = asyncio.Event()
    stack.fake.enqueue(Reply(text=REPLY, chunk_size=4, gate=gate, gate_after=6))
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "a long one")
    await wait_for(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".msg.bot"), "the reply")

    await run(browser, browser.refresh)

    def partial(browser: WebDriver) -> list[list[str]] | None:
        found = kinds(browser)
        return found if len(found) == 2 and REPLY.startswith(found[1][1]) else None

    # Not recorded yet: the message and the reply so far come from the turn's events.
    found = await wait_for(browser, partial, "the message and the reply so far")
    assert found[0] == ["user", "a long one"] and found[1][0] == "bot"
    assert not await run(browser, idle, browser)  # the page follows the turn
    gate.set()
    await wait_for_text(browser, REPLY)
    await wait_for(browser, idle, "the end of the turn")
    assert await run(browser, kinds, browser) == [["user", "a long one"], ["bot", REPLY]]

    # Reloaded once the turn is recorded: the history, shown once.
    session = await run(browser, current_session, browser)
    assert session is not None
    await recorded(stack, session, 2)
    await run(browser, browser.refresh)
    await wait_for_text(browser, REPLY)
    assert await run(browser, kinds, browser) == [["user", "a long one"], ["bot", REPLY]]
    assert await run(browser, idle, browser)


def ask_buttons(browser: WebDriver) -> list[Any]:
    return list(browser.find_elements(By.CSS_SELECTOR, ".ask button"))


@pytest.mark.parametrize(
    "stack",
    [{"PARLEY_POLICY": json.dumps([{"action": "ask", "tool": "calculator"}])}],
    indirect=True,
)
async def test_an_open_approval_can_be_answered_after_a_reload(
    stack: Stack, browser: WebDriver
) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text="It is 42."),
    )
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "6*7?")
    await wait_for(browser, ask_buttons, "the approval card")
    session = await run(browser, current_session, browser)
    assert session is not None
    await recorded(stack, session, 2)  # the question and the call waiting for its approval

    await run(browser, browser.refresh)
    buttons = await wait_for(browser, ask_buttons, "the approval card after the reload")
    assert [b.text for b in buttons] == ["Approve", "Deny"]
    status = await run(browser, browser.find_element, By.CSS_SELECTOR, ".tool .tool-status")
    assert status.text == "waiting for approval"
    await run(browser, buttons[0].click)
    await wait_for_text(browser, "It is 42.")
    await wait_for_text(browser, "Approved.")
    assert (await run(browser, shown, browser))[:1] == ["6*7?"]
    assert stack.fake.requests[1].tool_results()[0][1] == "42"
