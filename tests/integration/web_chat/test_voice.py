"""A recording in the web chat, in a real headless Chromium: chosen with the 📎 button like
any file, transcribed by the fake endpoint, what was heard shown in the person's message as
the answer streams, and again, from the record, when the page is opened anew; the
conversation is titled by the caption, or else by what was said."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from bot.files.voice import MARK
from tests.fakes.llm import Reply
from tests.integration.web_chat.test_files import choose
from tests.support.audio import tone
from tests.support.browser import severe_logs, wait_for, wait_for_text
from tests.support.chat_page import current_session, run, say, script
from tests.support.stack import Stack, recorded

pytestmark = pytest.mark.e2e
HEARD = "return [...document.querySelectorAll('#log .msg.user .heard')].map(q => q.textContent);"
TITLES = "return [...document.querySelectorAll('#conversations .title')].map(t => t.textContent);"
TYPED = (
    "return [...document.querySelectorAll('#log .msg.user')].map(m => m.firstChild?.textContent);"
)


@pytest.mark.parametrize("stack", [{"voice": "1"}], indirect=True)
async def test_a_recording_is_heard_and_the_transcript_shown_in_the_persons_message(
    stack: Stack, browser: WebDriver, tmp_path: Path
) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="It is sunny in Porto."))
    memo = tone("ogg", hz=590)
    stack.fake.transcriptions.script(memo, "What's the <b>weather</b> in Porto?")
    (tmp_path / "memo.ogg").write_bytes(memo)
    await run(browser, browser.get, stack.base_url + "/")
    await run(browser, choose, browser, tmp_path / "memo.ogg")
    await wait_for(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#chosen .file"),
                   "the chosen file")  # fmt: skip
    await say(browser, "Briefly")
    await wait_for_text(browser, "It is sunny in Porto.")
    quote = ["🎤 What's the <b>weather</b> in Porto?"]  # as text, never markup
    assert await run(browser, script, browser, HEARD) == quote
    [request] = stack.fake.requests
    assert request.last_user_text().endswith(
        f"Briefly\n\n{MARK}\nWhat's the <b>weather</b> in Porto?"
    )

    await run(browser, browser.refresh)
    await wait_for_text(browser, "It is sunny in Porto.")
    again = await wait_for(browser, lambda b: script(b, HEARD), "the quote from the record")
    assert again == quote
    assert await run(browser, script, browser, TYPED) == ["Briefly"]
    assert await run(browser, script, browser, TITLES) == ["Briefly"]  # its caption
    assert await run(browser, severe_logs, browser) == []


@pytest.mark.parametrize("stack", [{"voice": "1"}], indirect=True)
async def test_a_conversation_begun_by_a_recording_is_titled_by_what_was_said(
    stack: Stack, browser: WebDriver, tmp_path: Path
) -> None:
    """With nothing typed, the title is the transcript, never the line that marks it for
    the model."""
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="Rain in Lisbon."))
    memo = tone("ogg", hz=610)
    stack.fake.transcriptions.script(memo, "Will it rain in Lisbon tomorrow?")
    (tmp_path / "memo.ogg").write_bytes(memo)
    await run(browser, browser.get, stack.base_url + "/")
    await run(browser, choose, browser, tmp_path / "memo.ogg")
    await wait_for(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#chosen .file"),
                   "the chosen file")  # fmt: skip
    await say(browser, "")
    await wait_for_text(browser, "Rain in Lisbon.")
    session = await run(browser, current_session, browser)
    assert session is not None
    await recorded(stack, session, 2)
    async with stack.client() as client:
        [listed] = (await client.get("/api/sessions")).json()["items"]
    assert listed["title"] == "Will it rain in Lisbon tomorrow?"
    await run(browser, browser.refresh)
    await wait_for_text(browser, "Rain in Lisbon.")
    titles = await wait_for(browser, lambda b: script(b, TITLES), "the conversation listed")
    assert titles == ["Will it rain in Lisbon tomorrow?"]
