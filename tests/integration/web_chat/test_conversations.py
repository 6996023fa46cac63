"""The web chat's conversations: the history shown again after a reload, the list of
conversations to switch between, a new chat, and deleting one."""

from __future__ import annotations

import json
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.browser import severe_logs, wait_for, wait_for_text
from tests.support.chat_page import current_session, idle, run, say, script, shown
from tests.support.stack import Stack, recorded


def page_state(browser: WebDriver) -> dict[str, Any]:
    """The conversation shown: its messages by kind, tool cards, and the markdown it drew."""
    return script(  # type: ignore[no-any-return]
        browser,
        """const all = (css) => [...document.querySelectorAll(css)];
        return {
          users: all('#log .msg.user').map(e => e.textContent),
          bots: all('#log .msg.bot').map(e => e.innerText),
          strong: all('#log .msg.bot strong').map(e => e.textContent),
          cells: all('#log .msg.bot td').map(e => e.textContent.trim()),
          tools: all('#log .msg.tool').map(card => [
            card.querySelector('.tool-name').textContent,
            card.querySelector('.tool-result pre')?.textContent ?? null]),
        };""",
    )


async def test_history_is_shown_again_after_a_reload(stack: Stack, browser: WebDriver) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text="**Forty-two**, from:\n\n| a | b |\n|---|---|\n| 6 | 7 |", chunk_size=5),
        Reply(text="You are welcome."),
    )
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "what is 6*7?")
    await wait_for_text(browser, "Forty-two")
    await wait_for(browser, idle, "the end of the turn")
    live = await run(browser, page_state, browser)
    session = await run(browser, current_session, browser)
    assert session is not None
    await recorded(stack, session, 4)  # the question, the call, its result, the answer

    await run(browser, browser.refresh)
    await wait_for_text(browser, "Forty-two")
    restored = await run(browser, page_state, browser)
    assert restored == live
    assert restored["users"] == ["what is 6*7?"] and restored["strong"] == ["Forty-two"]
    assert restored["cells"] == ["6", "7"] and restored["tools"] == [["calculator", "42"]]
    assert await run(browser, current_session, browser) == session

    # The next message goes on in the same conversation: the model sees what came before.
    await say(browser, "thanks")
    await wait_for_text(browser, "You are welcome.")
    sent = json.dumps(stack.fake.requests[-1].body["messages"])
    assert "what is 6*7?" in sent and "Forty-two" in sent
    await recorded(stack, session, 6)
    assert await run(browser, severe_logs, browser) == []


def conversations(browser: WebDriver) -> list[dict[str, Any]]:
    return script(  # type: ignore[no-any-return]
        browser,
        """return [...document.querySelectorAll('#conversations .conversation')].map(li => ({
            id: li.dataset.id, title: li.querySelector('.title').textContent,
            current: li.getAttribute('aria-current') === 'true'}));""",
    )


def listed(*titles: str) -> Any:
    """A probe: the list of conversations once it shows exactly `titles`, in that order."""

    def probe(browser: WebDriver) -> list[dict[str, Any]] | None:
        found = conversations(browser)
        return found if [c["title"] for c in found] == list(titles) else None

    return probe


def click(browser: WebDriver, css: str) -> None:
    browser.find_element(By.CSS_SELECTOR, css).click()


async def test_conversations_are_listed_switched_and_deleted(
    stack: Stack, browser: WebDriver
) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(text="Reply one."), Reply(text="Reply two."), Reply(text="Reply three.")
    )
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "first conversation")
    await wait_for_text(browser, "Reply one.")
    first = await run(browser, current_session, browser)

    await run(browser, click, browser, "#new-chat")
    assert await run(browser, shown, browser) == []
    await say(browser, "second conversation")
    await wait_for_text(browser, "Reply two.")
    second = await run(browser, current_session, browser)
    assert first and second and first != second
    await recorded(stack, second, 2)

    # Newest first, titled by their first message, the open one marked.
    found = await wait_for(
        browser, listed("second conversation", "first conversation"), "both conversations"
    )
    assert [(c["id"], c["current"]) for c in found] == [(second, True), (first, False)]

    await run(browser, click, browser, f'.conversation[data-id="{first}"] .open')
    await wait_for_text(browser, "Reply one.")
    assert await run(browser, shown, browser) == ["first conversation", "Reply one."]
    assert await run(browser, current_session, browser) == first
    await say(browser, "more on the first")
    await wait_for_text(browser, "Reply three.")
    sent = json.dumps(stack.fake.requests[-1].body["messages"])
    assert "first conversation" in sent and "second conversation" not in sent
    record = await recorded(stack, first, 4)
    asked, answered = (m["text"] for m in record["recent"][-2:])
    assert asked.endswith("\nmore on the first") and answered == "Reply three."  # after its time
    # Active again, the first comes first; its title stays its first message.
    await wait_for(
        browser, listed("first conversation", "second conversation"), "the list reordered"
    )

    # Deleting takes a second press; the conversation is gone from the list and the server.
    remove = f'.conversation[data-id="{second}"] .delete'
    await run(browser, click, browser, remove)
    assert len(await run(browser, conversations, browser)) == 2
    await run(browser, click, browser, remove)
    await wait_for(browser, listed("first conversation"), "the list without the deleted one")
    async with stack.client() as client:
        assert (await client.get(f"/api/sessions/{second}")).status_code == 404
    assert await run(browser, current_session, browser) == first
    assert "Reply three." in " ".join(await run(browser, shown, browser))
