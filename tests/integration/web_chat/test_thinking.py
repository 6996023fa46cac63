"""The model's thinking in the web chat: folded above the answer it led to, as it streams
and again after a reload, from the record."""

from __future__ import annotations

from typing import Any

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.browser import severe_logs, wait_for, wait_for_text
from tests.support.chat_page import current_session, idle, run, say, script
from tests.support.stack import Stack, recorded

FIRST = "They want 6*7. The calculator is exact."
SECOND = "42 came back; say it plainly."


def thoughts(browser: WebDriver) -> list[dict[str, Any]]:
    """Each fold of thinking, in the order of the turn's parts, with what follows it."""
    return script(  # type: ignore[no-any-return]
        browser,
        """return [...document.querySelectorAll('#log .thought')].map(fold => ({
            text: fold.querySelector('.thought-text').textContent,
            open: fold.open,
            next: fold.nextElementSibling?.className ?? null}));""",
    )


@pytest.mark.parametrize("stack", [{"PARLEY_REASONING": "stream"}], indirect=True)
async def test_thinking_is_folded_above_what_it_led_to(stack: Stack, browser: WebDriver) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(thinking=FIRST, tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(thinking=SECOND, text="It is **42**.", chunk_size=4),
    )
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "what is 6*7?")
    await wait_for_text(browser, "It is 42.")
    await wait_for(browser, idle, "the end of the turn")
    live = await run(browser, thoughts, browser)
    assert [t["text"] for t in live] == [FIRST, SECOND]
    assert [t["open"] for t in live] == [False, False]
    assert live[0]["next"].startswith("msg tool") and live[1]["next"].startswith("msg bot")

    session = await run(browser, current_session, browser)
    assert session is not None
    await recorded(stack, session, 4)
    await run(browser, browser.refresh)
    await wait_for_text(browser, "It is 42.")
    assert await run(browser, thoughts, browser) == live
    assert await run(browser, severe_logs, browser) == []
