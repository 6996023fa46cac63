"""The web chat page in a real headless Chromium: a streamed reply, approval and tool cards
(a program shown as code), an expired request, the API token asked for, kept in the browser
and sent on every call, model text that looks like HTML, the stop button, and a cut stream
resumed."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from bot.session.decisions import EXPIRED as DECISIONLESS
from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.browser import severe_logs, wait_for, wait_for_text
from tests.support.chat_page import run, say, script, shown, tool_cards
from tests.support.helper_brains import one_helper
from tests.support.redis_server import RedisServer
from tests.support.stack import Stack

ASK_CALCULATOR = json.dumps([{"action": "ask", "tool": "calculator"}])
EXPIRED = DECISIONLESS  # no decision was made: not a denial


def ask_card(browser: WebDriver) -> dict[str, Any] | None:
    """The newest approval card: its heading, arguments, buttons and outcome."""
    return script(  # type: ignore[no-any-return]
        browser,
        """const card = [...document.querySelectorAll('#log .ask')].pop();
        if (!card) return null;
        return {head: card.querySelector('.card-head').textContent,
                args: [...card.querySelectorAll('.args')].map(e => JSON.parse(e.textContent)),
                buttons: [...card.querySelectorAll('button')].map(e => e.textContent),
                outcome: card.querySelector('.outcome').textContent};""",
    )


def settled_card(browser: WebDriver) -> dict[str, Any] | None:
    """The newest approval card once it shows its outcome."""
    card = ask_card(browser)
    return card if card and card["outcome"] else None


async def press(browser: WebDriver, label: str) -> None:
    buttons = await run(browser, browser.find_elements, By.CSS_SELECTOR, ".ask button")
    await run(browser, next(b for b in buttons if b.text == label).click)


@pytest.mark.parametrize("stack", [{"PARLEY_POLICY": ASK_CALCULATOR}], indirect=True)
async def test_chat_page_streams_and_asks(stack: Stack, browser: WebDriver) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(text="Hello! Nice to meet you.", chunk_size=3, delay=0.01),
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text="It is 42."),
    )
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "hello")
    await wait_for_text(browser, "Hello! Nice to meet you.")
    await say(browser, "what is 6*7?")
    card = await wait_for(browser, ask_card, "the approval card")
    assert card == {
        "head": "Allow calculator?",
        "args": [{"expression": "6*7"}],
        "buttons": ["Approve", "Deny"],
        "outcome": "",
    }
    [waiting] = await run(browser, tool_cards, browser)
    assert waiting["status"] == "waiting for approval" and waiting["result"] is None
    await press(browser, "Approve")
    messages = await wait_for_text(browser, "It is 42.")
    assert messages[0] == "hello"
    card = await wait_for(browser, settled_card, "the decision")
    assert card["outcome"] == "Approved." and card["buttons"] == []
    [done] = await run(browser, tool_cards, browser)
    assert done["name"] == "calculator" and done["args"] == {"expression": "6*7"}
    assert done["result"] == "42" and not any(done["open"]) and not done["failed"]  # folded
    assert str(done["status"]).startswith("done")
    assert stack.fake.requests[2].tool_results()[0][1] == "42"


@pytest.mark.parametrize(
    "stack",
    [{"PARLEY_POLICY": ASK_CALCULATOR, "PARLEY_CONFIRMATION_TTL": "5"}],
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
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "2+2?")
    card = await wait_for(browser, ask_card, "the approval card")
    assert card["args"] == [{"expression": "2+2"}] and card["buttons"] == ["Approve", "Deny"]
    await wait_for_text(browser, "Nobody approved, so I did not calculate.")
    card = await wait_for(browser, settled_card, "the decision")
    assert card["outcome"] == "Expired." and card["buttons"] == []  # cannot be pressed any more
    [call] = await run(browser, tool_cards, browser)
    assert call["result"] == EXPIRED and call["failed"]
    assert stack.fake.requests[1].tool_results()[0][1] == EXPIRED


PROGRAM = 'import os\nprint(os.getcwd())\nprint("a \\"quoted\\" word")'
# Each call of the newest approval card: its name, the JSON of the arguments shown as JSON,
# and each argument shown as text: its label, its text, the lines it is drawn on, whether
# its font is monospace.
CARD_CALLS = """const card = [...document.querySelectorAll('#log .ask')].pop();
if (!card) return null;
return [...card.querySelectorAll('.call')].map(call => ({
  name: call.querySelector('.tool-name').textContent,
  args: [...call.querySelectorAll('pre.args')].map(e => JSON.parse(e.textContent)),
  texts: [...call.querySelectorAll('.arg-text')].map(block => {
    const pre = block.querySelector('pre');
    return [block.querySelector('.arg-label').textContent, pre.textContent,
            pre.innerText.split('\\n').length,
            getComputedStyle(pre).fontFamily.includes('monospace')];
  })}));"""


async def test_the_approval_card_shows_a_program_as_code(stack: Stack, browser: WebDriver) -> None:
    """As in Telegram: a program, and any argument of several lines, is shown as the text it
    is, in a block of its own; the other arguments as indented JSON (default settings: both
    tools ask)."""
    await stack.start_worker()
    write = ToolCallSpec("write_file", {"path": "notes.txt", "content": "first line\nsecond"})
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("run_python", {"code": PROGRAM}), write]),
        Reply(text="Nothing was run."),
    )
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "run it and write it down")
    calls = await wait_for(browser, lambda b: script(b, CARD_CALLS), "the approval card")
    assert calls == [
        {"name": "run_python", "args": [], "texts": [["code", PROGRAM, 3, True]]},
        {
            "name": "write_file",
            "args": [{"path": "notes.txt"}],
            "texts": [["content", "first line\nsecond", 2, True]],
        },
    ]
    await press(browser, "Deny")
    await wait_for_text(browser, "Nothing was run.")
    assert (await wait_for(browser, settled_card, "the decision"))["outcome"] == "Denied."
    assert await run(browser, severe_logs, browser) == []


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
    "stack", [{"PARLEY_API_TOKEN": TOKEN, "PARLEY_POLICY": ASK_CALCULATOR}], indirect=True
)
async def test_chat_page_asks_for_the_token_and_keeps_it(stack: Stack, browser: WebDriver) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(text="Hello with a token.", chunk_size=3, delay=0.01),
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text="It is 42."),
    )
    await run(browser, browser.get, stack.base_url + "/")
    note = await wait_for(browser, token_note, "the question for the token")
    assert "PARLEY_API_TOKEN" in note and "refused" not in note

    await run(browser, give_token, browser, "not-the-token")
    await wait_for(browser, lambda b: "refused" in token_note(b), "the wrong token refused")
    assert await run(browser, kept_token, browser) is None

    await run(browser, give_token, browser, TOKEN)
    await say(browser, "hello")
    await wait_for_text(browser, "Hello with a token.")
    assert await run(browser, kept_token, browser) == TOKEN

    # Opened again: the kept token is sent, nothing is asked, and the streams carry it too
    # (the turn after the approval is followed on the session's event stream).
    await run(browser, browser.refresh)
    await wait_for_text(browser, "Hello with a token.")  # the conversation's history
    await say(browser, "what is 6*7?")
    await wait_for(browser, ask_card, "the approval card")
    await press(browser, "Approve")
    messages = await wait_for_text(browser, "It is 42.")
    card = await wait_for(browser, settled_card, "the decision")
    assert card["outcome"] == "Approved." and "error" not in " ".join(messages).lower()
    assert await run(browser, token_note, browser) == ""
    assert len(stack.fake.requests) == 3


async def test_chat_page_shows_text_that_looks_like_html_as_text(
    stack: Stack, browser: WebDriver
) -> None:
    """Nothing the model writes is dropped, and nothing becomes markup in the page: HTML in
    markdown, inline or a block of its own, is shown as the text it is, and an image is not
    loaded (its address could carry data out), only linked."""
    await stack.start_worker()
    inline = "<img src=x onerror=\"document.title='injected'\"> <b>not bold</b>"
    block = "<script>document.title='scripted'</script>"
    image = "![pixel](https://example.com/pixel.png)"  # not fetched: shown as a link
    text = f"2. second item with <angle> & ampersand {inline}\n\n{block}\n\n{image}\n\nafter"
    stack.fake.enqueue(Reply(text=text, chunk_size=5, delay=0.01))
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "say it")
    await wait_for_text(browser, "after")
    bubble = await run(browser, browser.find_element, By.CSS_SELECTOR, "#log .msg.bot")
    item = await run(browser, bubble.find_element, By.CSS_SELECTOR, "ol[start='2'] > li")
    assert item.text == f"second item with <angle> & ampersand {inline}"
    assert block in bubble.text and bubble.text.endswith("after")
    markup = await run(browser, browser.find_elements, By.CSS_SELECTOR, "#log img, #log b")
    assert markup == []
    assert await run(browser, browser.find_elements, By.CSS_SELECTOR, "#log script") == []
    link = await run(browser, bubble.find_element, By.CSS_SELECTOR, "a")
    assert await run(browser, link.get_attribute, "href") == "https://example.com/pixel.png"
    assert await run(browser, lambda: browser.title) == "Parley"


async def test_the_stop_button_stops_the_turn(stack: Stack, browser: WebDriver) -> None:
    await stack.start_worker()
    gate = asyncio.Event()
    stack.fake.enqueue(Reply(text="Never finished, this.", chunk_size=3, gate=gate, gate_after=5))
    await run(browser, browser.get, stack.base_url + "/")
    stop = await run(browser, browser.find_element, By.ID, "stop")
    assert not await run(browser, stop.is_enabled)
    await say(browser, "go on and on")
    await wait_for(browser, lambda b: bot_texts(b) and bot_texts(b)[-1], "the first words")
    assert await run(browser, stop.is_enabled)
    await run(browser, stop.click)
    await wait_for_text(browser, "Stopped.")
    await wait_for(browser, lambda b: not stop.is_enabled(), "the stop button off")
    assert not (await run(browser, bot_texts, browser))[-1].endswith("this.")
    gate.set()


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
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "go")
    await wait_for(browser, lambda b: bot_texts(b) and bot_texts(b)[-1], "the first words")

    await run(browser, server.stop)
    await wait_for_text(browser, "reconnecting")
    await run(browser, server.start)
    gate.set()
    replies = await wait_for(browser, finished, "the whole reply after the restart", limit=90)
    # The turn went on where it was or, if the restart cost its worker the turn, started
    # over after a `reset`: either way one bubble holds one whole answer.
    assert replies in (["Cut short by a restart"], ["The whole answer."]), shown(browser)
    assert await run(browser, browser.find_elements, By.CSS_SELECTOR, ".msg.error") == []


def bot_texts(browser: WebDriver) -> list[str]:
    return [str(e.text) for e in browser.find_elements(By.CSS_SELECTOR, ".msg.bot")]


def finished(browser: WebDriver) -> list[str] | None:
    """The replies shown once the reconnecting note is gone and the stop button is off."""
    note = browser.find_elements(By.CSS_SELECTOR, ".msg.note")
    stop = browser.find_element(By.ID, "stop")
    return None if note or stop.is_enabled() else bot_texts(browser)


# The helper writes a file (which needs an approval by default) and says how it went.
helper_writes = one_helper(
    "write it down",
    "note the number",
    ToolCallSpec("write_file", {"path": "n.txt", "content": "1"}),
    done="All done. ",
)


async def test_a_helpers_approval_is_a_card_in_the_chat(stack: Stack, browser: WebDriver) -> None:
    """The card names the helper; approved, the helper's call runs and the reply goes on."""
    await stack.start_worker()
    stack.fake.responder = helper_writes
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "write it down")
    card = await wait_for(browser, ask_card, "the helper's approval card")
    assert card["head"] == "Allow write_file?" and card["buttons"] == ["Approve", "Deny"]
    line = await run(browser, browser.find_element, By.CSS_SELECTOR, "#log .ask .helper-line")
    assert line.text == "🤖 Asked by a helper working on: note the number"
    await press(browser, "Approve")
    messages = await wait_for_text(browser, "All done. helper: ")
    assert (await wait_for(browser, settled_card, "the decision"))["outcome"] == "Approved."
    assert "error" not in " ".join(messages).lower()
    (written,) = list(stack.tmp.rglob("n.txt"))
    assert written.read_text() == "1"
