"""Replies said aloud in the web chat, in a real headless Chromium with the real page: `/voice
on` typed in the conversation, then a message; the bot's turn shows the answer's text and,
below it, an audio player (`audio.voice` in a `.msg.sent-file`) whose sound the page fetched
with the API's token from `GET /api/files/{sha256}` into a `blob:` URL, and which Chromium
reads as Opus in Ogg as long as the speech endpoint said it: as the turn streams, and again,
from the record, when the page is opened anew."""

from __future__ import annotations

from typing import Any

import pytest
from selenium.webdriver.remote.webdriver import WebDriver

from tests.fakes.llm import Reply
from tests.support.browser import severe_logs, wait_for, wait_for_text
from tests.support.chat_page import current_session, idle, run, say, script
from tests.support.stack import Stack, recorded

pytestmark = pytest.mark.e2e
SPEECH = {"speech": "1"}
ANSWER = "Lisbon sits on the **Tagus**, by the sea."
SAID = "Lisbon sits on the Tagus, by the sea."
ON = "From now on I answer you in text and with a voice note."
PLAYERS = "return document.querySelectorAll('#log .turn .msg.sent-file > audio.voice').length;"
# The turn's parts in order, and its player once Chromium has read the sound's length (or
# failed to).
TURN = """const turns = [...document.querySelectorAll('#log .turn')];
const turn = turns[turns.length - 1];
const audio = turn?.querySelector('.msg.sent-file > audio.voice');
if (!audio || !audio.src.startsWith('blob:')) return null;
if (!audio.error && !(audio.readyState >= 1 && Number.isFinite(audio.duration))) return null;
const text = turn.querySelector('.msg.bot');
return {
  parts: [...turn.children].map((e) => e.className),
  text: text.textContent.trim(), bold: text.querySelector('strong')?.textContent ?? null,
  textBottom: text.getBoundingClientRect().bottom,
  playerTop: audio.closest('.msg').getBoundingClientRect().top,
  src: audio.src, duration: audio.duration, title: audio.title, controls: audio.controls,
  error: audio.error && audio.error.message,
};"""


async def asked_aloud(stack: Stack, browser: WebDriver) -> None:
    """`/voice on`, then a question, typed in the page, until the answer's stream ended."""
    await stack.start_worker()
    stack.fake.enqueue(Reply(text=ANSWER))
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "/voice on")
    await wait_for_text(browser, ON)
    await say(browser, "Where is Lisbon?")
    await wait_for_text(browser, SAID)
    await wait_for(browser, idle, "the turn's stream ended")  # the page shows no more of it


async def the_player(browser: WebDriver) -> dict[str, Any]:
    """The one player of the bot's turn, once Chromium has read its sound."""
    assert await run(browser, script, browser, PLAYERS) == 1, "no player in the bot's turn"

    def played(b: WebDriver) -> dict[str, Any] | None:
        return script(b, TURN)  # type: ignore[no-any-return]

    shown = await wait_for(browser, played, "the voice reply's player, its length read")
    assert shown["error"] is None, shown["error"]
    assert shown["parts"] == ["msg bot markdown", "msg sent-file"]  # the text, then the player
    assert (shown["text"], shown["bold"]) == (SAID, "Tagus")  # the Markdown drawn
    assert shown["textBottom"] <= shown["playerTop"]  # shown below the text
    assert shown["controls"]
    return shown


@pytest.mark.parametrize("stack", [SPEECH], indirect=True)
async def test_a_voice_reply_is_a_player_below_the_answers_text(
    stack: Stack, browser: WebDriver
) -> None:
    await asked_aloud(stack, browser)
    shown = await the_player(browser)
    [said] = stack.fake.speech.requests
    assert said.text == SAID
    seconds = said.milliseconds / 1000
    assert abs(shown["duration"] - seconds) < 0.2, shown
    assert shown["title"] == f"Voice reply ({max(1, round(seconds))} s)"
    assert await run(browser, severe_logs, browser) == []


@pytest.mark.parametrize("stack", [SPEECH], indirect=True)
async def test_the_voice_reply_is_shown_again_from_the_record(
    stack: Stack, browser: WebDriver
) -> None:
    await asked_aloud(stack, browser)
    session = await run(browser, current_session, browser)
    assert session is not None
    await recorded(stack, session, 2)
    await run(browser, browser.refresh)
    await wait_for_text(browser, SAID)
    shown = await the_player(browser)
    [said] = stack.fake.speech.requests
    assert abs(shown["duration"] - said.milliseconds / 1000) < 0.2, shown
    assert shown["title"] == "Voice reply"  # the record keeps no length: the player shows it
    assert await run(browser, severe_logs, browser) == []
