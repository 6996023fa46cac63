"""Commands typed in the web chat, in a real headless Chromium: `/memory` lists the person's
own memories as they were written, `/forget N` forgets one, `/compact` says what it saved, and
a reload afterwards shows the conversation as it stands, waiting for nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from adapters.chat.memory_list import PRIVATE_HEADER
from tests.agent.test_context import is_summary_request
from tests.fakes.llm import RecordedRequest, Reply
from tests.support.browser import wait_for, wait_for_text
from tests.support.chat_page import current_session, idle, run, say, script
from tests.support.chat_stores import kept, recall_store
from tests.support.stack import Stack, recorded

ODD = "Ann writes <b>*bold*</b> and snake_case & more"
COMPACTED = re.compile(
    r"Compacted the conversation: about [\d,]+ → [\d,]+ tokens \(2 earlier messages summarised\)\."
)


PENDING = """const kept = JSON.parse(localStorage.getItem('parley.chat.progress') || '{}');
    return (kept[arguments[0]] || {}).pending ?? null;"""


def kinds(browser: WebDriver) -> list[list[str]]:
    """Each message: its kind and its text."""
    return script(  # type: ignore[no-any-return]
        browser,
        """return [...document.querySelectorAll('#log .msg')].map(e =>
            [e.classList[1], e.innerText.trim()]);""",
    )


async def settled(browser: WebDriver, count: int) -> list[list[str]]:
    """The messages, once there are `count` and no stream is open."""

    def done(b: WebDriver) -> list[list[str]] | None:
        found = kinds(b)
        return found if len(found) == count and idle(b) else None

    return await wait_for(browser, done, f"{count} messages and no stream open")


async def test_memory_and_forget_in_the_web_chat(stack: Stack, browser: WebDriver) -> None:
    async with recall_store(stack) as recall:
        tea, odd = await kept(recall, "http:local", ["I drink green tea", ODD])
        await kept(recall, "tg:1", ["Bob's cat is called Tom"])
        await run(browser, browser.get, stack.base_url + "/")
        await say(browser, "/memory")
        shown = await settled(browser, 2)
        await say(browser, f"/forget {tea.id}")
        forgot = await settled(browser, 4)
        assert [m.text for m in await recall.memories.all("http:local")] == [ODD]
    assert shown[0] == ["user", "/memory"]
    assert shown[1] == ["bot", "\n".join([PRIVATE_HEADER, odd.line(), tea.line()])]  # as written
    assert forgot[3] == ["bot", f"Forgot #{tea.id}."]
    session = await run(browser, current_session, browser)
    assert await run(browser, script, browser, PENDING, session) is None  # nothing waits
    await run(browser, browser.refresh)  # nothing recorded, and nothing followed
    await say(browser, "/memory")
    again = await settled(browser, 2)
    assert again[1] == ["bot", "\n".join([PRIVATE_HEADER, odd.line()])]
    assert stack.fake.requests == []


@pytest.mark.parametrize("stack", [{"PARLEY_COMPACT_KEEP_TURNS": "1"}], indirect=True)
async def test_compact_in_the_web_chat(stack: Stack, browser: WebDriver) -> None:
    await stack.start_worker()

    def answering(request: RecordedRequest) -> Reply:
        return Reply(text="notes" if is_summary_request(request) else "noted")

    stack.fake.responder = answering
    await run(browser, browser.get, stack.base_url + "/")
    for n, text in enumerate(["the tide comes in twice a day", "and the moon pulls it"]):
        await say(browser, text)
        await settled(browser, 2 * n + 2)
    await say(browser, "/compact")
    await wait_for_text(browser, "Compacted the conversation")
    found: list[Any] = await settled(browser, 6)
    assert found[4] == ["user", "/compact"]
    assert found[5][0] == "bot" and COMPACTED.fullmatch(found[5][1]), found[5]
    session = await run(browser, current_session, browser)
    assert session is not None
    await recorded(stack, session, 4)
    await run(browser, browser.refresh)  # the record keeps the conversation as it was said
    history = await settled(browser, 4)
    assert [text for _, text in history] == [
        "the tide comes in twice a day", "noted", "and the moon pulls it", "noted"
    ]  # fmt: skip
