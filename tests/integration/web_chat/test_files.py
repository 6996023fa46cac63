"""Files in the web chat, in a real headless Chromium: an image chosen with the 📎 button is
shown in the person's message, reaches the model as an image, and is shown again, fetched
from the API with the token, when the page is opened anew; files the bot sends show in its
turn, an image drawn and anything else a link to download it, each with its caption, live
and in the history."""

from __future__ import annotations

from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from adapters.http.place import session_key
from bot.tools.workspace_paths import workspace_of
from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.browser import severe_logs, wait_for, wait_for_text
from tests.support.chat_page import current_session, run, say, script
from tests.support.images import image_bytes
from tests.support.stack import Stack

SENT = """return [...document.querySelectorAll('#log .msg.sent-file')].map(m => {
    const i = m.querySelector('img'), a = m.querySelector('a');
    const caption = m.querySelector('.caption')?.textContent ?? null;
    return i ? ['img', i.alt, i.complete ? i.naturalWidth : 0, caption]
             : ['a', a.textContent, caption]; });"""
# Records what a click on a download link would save (its name and address) instead of
# letting the browser save it.
WATCH_DOWNLOADS = """window.saved = null;
HTMLAnchorElement.prototype.click = function () {
  window.saved = [this.download, this.href.slice(0, 5)];
};"""
CAPTION = "Sales by month:\nup since <March>"  # text, never markup
SHOWN_IMAGES = """return [...document.querySelectorAll('#log .msg.user img')]
    .filter(i => i.complete && i.naturalWidth > 0).map(i => [i.src.slice(0, 5), i.naturalWidth]);"""


def choose(browser: WebDriver, path: Path) -> None:
    """The 📎 button opens the browser's file picker; a test hands the file to its input."""
    field = browser.find_element(By.ID, "files")
    browser.execute_script("arguments[0].hidden = false", field)
    field.send_keys(str(path))


async def test_an_image_is_sent_shown_and_shown_again(
    stack: Stack, browser: WebDriver, tmp_path: Path
) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="A small picture."))
    picture = image_bytes((200, 120), "PNG")
    (tmp_path / "picture.png").write_bytes(picture)
    await run(browser, browser.get, stack.base_url + "/")
    await run(browser, choose, browser, tmp_path / "picture.png")
    chips = await wait_for(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#chosen .file"),
                           "the chosen file")  # fmt: skip
    assert "picture.png" in chips[0].text
    await say(browser, "what is this?")
    await wait_for_text(browser, "A small picture.")
    sent = await wait_for(browser, lambda b: script(b, SHOWN_IMAGES), "the image in the message")
    assert sent == [["blob:", 200]]
    assert await run(browser, lambda: browser.find_elements(By.CSS_SELECTOR, "#chosen .file")) == []
    [request] = stack.fake.requests
    assert request.images() == [("image/png", picture)]
    assert request.last_user_text().endswith("what is this?")

    await run(browser, browser.refresh)
    await wait_for_text(browser, "A small picture.")
    again = await wait_for(browser, lambda b: script(b, SHOWN_IMAGES), "the image from the API")
    assert again == [["blob:", 200]]
    assert await run(browser, severe_logs, browser) == []


async def test_files_the_bot_sends_show_in_its_turn_and_in_the_history(
    stack: Stack, browser: WebDriver
) -> None:
    await stack.start_worker()
    calls = [
        ToolCallSpec("send_file", {"path": "chart.png", "caption": CAPTION}, id="c1"),
        ToolCallSpec("send_file", {"path": "cities.csv"}, id="c2"),
    ]
    stack.fake.enqueue(Reply(text="Hi."))
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "hello")  # the conversation is made by the first message
    await wait_for_text(browser, "Hi.")
    stack.fake.enqueue(Reply(tool_calls=calls), Reply(text="Both are above."))
    session = await run(browser, current_session, browser)
    folder = workspace_of(Path(stack.env["PARLEY_WORKSPACE_DIR"]), session_key(str(session)))
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    (folder / "chart.png").write_bytes(image_bytes((300, 200), "PNG"))
    (folder / "cities.csv").write_bytes(b"city,people\nLisbon,545000\n")
    await say(browser, "the chart and the table")
    await wait_for_text(browser, "Both are above.")
    # The caption shows with its file, as Telegram and Slack post it.
    expected = [["img", "chart.png", 300, CAPTION], ["a", "📄 cities.csv (26 bytes)", None]]
    shown = await wait_for(
        browser, lambda b: (found := script(b, SENT)) == expected and found, "the files sent"
    )
    assert shown == expected
    await run(browser, browser.refresh)
    await wait_for_text(browser, "Both are above.")
    again = await wait_for(
        browser, lambda b: (found := script(b, SENT)) == expected and found, "them again"
    )
    assert again == expected
    await run(browser, script, browser, WATCH_DOWNLOADS)
    link = await run(browser, browser.find_element, By.CSS_SELECTOR, "#log .msg.sent-file a")
    await run(browser, link.click)
    saved = await wait_for(browser, lambda b: script(b, "return window.saved"), "the download")
    assert saved == ["cities.csv", "blob:"]  # the bytes, fetched with the token
    assert await run(browser, severe_logs, browser) == []
