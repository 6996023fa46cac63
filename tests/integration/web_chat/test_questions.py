"""The agent's questions (`ask_user`) in the web chat, in a real headless Chromium: each
question's options and a field for one's own words, answered at once with Send; the call
waits for the person's answer, not for an approval."""

from __future__ import annotations

from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.browser import wait_for, wait_for_text
from tests.support.chat_page import run, say, script, tool_cards
from tests.support.stack import Stack

QUESTIONS = [
    {"question": "Which colour?", "options": ["Red", "Blue"]},
    {"question": "When?", "options": ["Today", "Tomorrow"]},
]


def question_card(browser: WebDriver) -> dict[str, Any] | None:
    return script(  # type: ignore[no-any-return]
        browser,
        """const card = [...document.querySelectorAll('#log .question')].pop();
        if (!card) return null;
        return {heads: [...card.querySelectorAll('.card-head')].map(e => e.textContent),
                buttons: [...card.querySelectorAll('button:not([disabled])')]
                    .map(e => e.textContent),
                outcome: card.querySelector('.outcome').textContent};""",
    )


async def test_the_questions_are_answered_with_options_and_own_words(
    stack: Stack, browser: WebDriver
) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("ask_user", {"questions": QUESTIONS})]),
        Reply(text="Blue, after the rain."),
    )
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "paint the shed")
    card = await wait_for(browser, question_card, "the question card")
    assert card["heads"] == ["Which colour?", "When?"]
    assert card["buttons"] == ["Red", "Blue", "Today", "Tomorrow", "Send"]
    [waiting] = await run(browser, tool_cards, browser)  # the person answers; nobody approves
    assert waiting["name"] == "ask_user" and waiting["status"] == "waiting for your answer"
    buttons = await run(browser, browser.find_elements, By.CSS_SELECTOR, ".question button")
    await run(browser, next(b for b in buttons if b.text == "Blue").click)
    (_, second) = await run(browser, browser.find_elements, By.CSS_SELECTOR, ".question input")
    await run(browser, second.send_keys, "after the rain")
    await run(browser, next(b for b in buttons if b.text == "Send").click)
    await wait_for_text(browser, "Blue, after the rain.")
    card = await wait_for(
        browser, lambda b: (c := question_card(b)) and c["outcome"] and c, "the outcome"
    )
    assert card["outcome"] == "Answered." and card["buttons"] == []
    result = stack.fake.requests[1].tool_results()[0][1]
    assert '"Which colour?" → "Blue"' in result
    assert '"When?" → in their own words: "after the rain"' in result


@pytest.mark.parametrize(
    "stack", [{"PARLEY_CONFIRMATION_TTL": "8", "PARLEY_CONFIRMATION_REMIND": "6"}], indirect=True
)
async def test_the_card_says_when_it_is_reminded(stack: Stack, browser: WebDriver) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("ask_user", {"questions": QUESTIONS})]),
        Reply(text="No answer came."),
    )
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "paint the shed")
    await wait_for(browser, question_card, "the question card")

    def reminded(b: WebDriver) -> object:
        return script(b, "return document.querySelector('#log .question .reminder')?.textContent")

    assert await wait_for(browser, reminded, "the reminder") == "⏰ Still waiting for you."
    await wait_for_text(browser, "No answer came.")
