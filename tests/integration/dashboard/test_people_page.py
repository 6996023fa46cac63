"""The dashboard's people page (`/admin/people`) in a real headless Chromium, over memories
written to the stack's database as the tools and the digest job write them: it lists whose
memories there are, opens one to its memories newest first with the digest marked by its
day (its text shown as text, never as markup), searches by meaning, switches the daily digest
off, forgets one memory, and forgets all of them once confirmed; a group chat is opened by
its id. No script fails."""

from __future__ import annotations

import asyncio
from datetime import date

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from bot.store.digests import Digests
from tests.integration.telegram.test_memory import OTHERS, REX
from tests.support.browser import screenshot, severe_logs, wait_for
from tests.support.chat_stores import kept, recall_store
from tests.support.stack import Stack

ANN, TEAM, SAM = "tg:1", "chat:tg:-100", "slack:T1:U1"
DAY = date(2026, 12, 6)
DIGEST = f"{DAY}: Ann asked about <b>green tea</b> & biscuits"
ROWS = """return [...document.querySelectorAll('#scopes tbody tr')]
  .map((r) => [...r.cells].map((c) => c.textContent));"""
ITEMS = """return [...document.querySelectorAll('#memories li')].map((li) => [
  li.querySelector('.text').textContent, li.querySelector('.day')?.textContent ?? null]);"""


def rows(browser: WebDriver) -> dict[str, list[str]]:
    """The listed scopes: each one's cells after the first, by its scope."""
    return {str(cells[0]): [str(c) for c in cells[1:5]] for cells in browser.execute_script(ROWS)}


def items(browser: WebDriver) -> list[tuple[str, str | None]]:
    """The shown memories, in order: each one's text and its digest's day mark."""
    return [(str(text), day) for text, day in browser.execute_script(ITEMS)]


def shown_for(browser: WebDriver, scope: str, query: str = "") -> bool:
    loaded = browser.execute_script("return document.body.dataset.memories")
    return bool(loaded == f"{scope} {query}")


def click(browser: WebDriver, selector: str) -> None:
    browser.find_element(By.CSS_SELECTOR, selector).click()


def text_of(browser: WebDriver, element_id: str) -> str:
    element = browser.find_element(By.ID, element_id)
    return str(element.text) if element.is_displayed() else ""


def type_into(browser: WebDriver, element_id: str, text: str, then: str) -> None:
    field = browser.find_element(By.ID, element_id)
    field.clear()
    field.send_keys(text)
    browser.find_element(By.ID, then).click()


def switched_on(browser: WebDriver) -> bool:
    return bool(browser.find_element(By.ID, "digest-switch").is_selected())


async def check_listed_and_opened(browser: WebDriver, stack: Stack) -> None:
    """The scopes with their counts; Ann's memories newest first, her digest marked."""
    await asyncio.to_thread(browser.get, stack.base_url + "/admin/people")
    listed = await wait_for(browser, lambda b: len(rows(b)) == 3 and rows(b), "three scopes")
    assert listed == {
        ANN: ["person", "3", "1", "on"],
        SAM: ["person", "1", "0", "on"],
        TEAM: ["group chat", "1", "0", "off"],
    }
    await asyncio.to_thread(click, browser, f'#scopes tr[data-scope="{ANN}"]')
    await wait_for(browser, lambda b: shown_for(b, ANN), "Ann's memories")
    assert await asyncio.to_thread(items, browser) == [
        (DIGEST, "digest of 2026-12-06"),
        (OTHERS[1], None),
        (OTHERS[0], None),
        (REX, None),
    ]
    marked = await asyncio.to_thread(browser.find_elements, By.CSS_SELECTOR, "#memories b")
    assert marked == []  # the digest's "<b>" is its text, not markup
    assert "3 memories and 1 digest" in await asyncio.to_thread(text_of, browser, "memory-note")
    assert await asyncio.to_thread(switched_on, browser)
    assert "scope=tg%3A1" in await asyncio.to_thread(lambda: browser.current_url)


async def check_search(browser: WebDriver) -> None:
    await asyncio.to_thread(type_into, browser, "search-q", "pet", "search-go")
    await wait_for(browser, lambda b: shown_for(b, ANN, "pet"), "the search's answer")
    assert (await asyncio.to_thread(items, browser))[0] == (REX, None)
    assert "best first" in await asyncio.to_thread(text_of, browser, "memory-note")
    await asyncio.to_thread(click, browser, "#search-clear")
    await wait_for(browser, lambda b: shown_for(b, ANN) and len(items(b)) == 4, "all again")


async def test_the_people_page_lists_searches_and_forgets_memories(
    stack: Stack, browser: WebDriver
) -> None:
    async with recall_store(stack) as recall:
        _, eve, _ = await kept(recall, ANN, [REX, *OTHERS[:2]])
        assert recall.embedder is not None
        model = recall.embedder.name
        await kept(recall, SAM, ["Sam plans the releases"])
        await recall.memories.add(TEAM, "The team deploys on Thursdays")
        digests = Digests(recall.memories.engine)
        await digests.switch(TEAM, on=False, by="tg:9")
        assert await digests.keep(ANN, DAY, DIGEST, [ANN]) is not None
        await asyncio.to_thread(browser.set_window_size, 1400, 1000)
        await check_listed_and_opened(browser, stack)
        await check_search(browser)

        await asyncio.to_thread(click, browser, f'#memories li[data-id="{eve.id}"] .forget')
        await wait_for(browser, lambda b: len(items(b)) == 3, "Eve's memory forgotten")
        assert [m.text for m in await recall.memories.all(ANN)] == [REX, OTHERS[1], DIGEST]
        await wait_for(browser, lambda b: rows(b)[ANN][1] == "2", "the count down to 2")

        await asyncio.to_thread(click, browser, "#digest-switch")
        await wait_for(browser, lambda b: rows(b)[ANN][3] == "off", "Ann's digest off")
        assert await digests.off([ANN]) == {ANN}
        await asyncio.to_thread(screenshot, browser, "admin-people.png")

        assert len(await recall.vectors.of_scope(ANN, model)) == 2  # Rex's and the coffee's
        await asyncio.to_thread(click, browser, "#forget-all")
        asked = await asyncio.to_thread(text_of, browser, "confirm-all")
        assert ANN in asked and "cannot be undone" in asked
        await asyncio.to_thread(click, browser, "#confirm-no")
        assert await asyncio.to_thread(text_of, browser, "confirm-all") == ""
        assert len(await recall.memories.all(ANN)) == 3  # kept: the operator said no
        await asyncio.to_thread(click, browser, "#forget-all")
        await asyncio.to_thread(click, browser, "#confirm-yes")
        await wait_for(browser, lambda b: ANN not in rows(b) and len(rows(b)) == 2, "Ann gone")
        assert await asyncio.to_thread(items, browser) == []
        note = await asyncio.to_thread(text_of, browser, "memory-note")
        assert note.startswith("Forgot 3 memories and digests")
        assert await recall.memories.all(ANN) == []
        assert await recall.vectors.of_scope(ANN, model) == []
        assert [m.text for m in await recall.memories.all(SAM)] == ["Sam plans the releases"]

        await asyncio.to_thread(type_into, browser, "open-id", TEAM, "open")
        await wait_for(browser, lambda b: shown_for(b, TEAM), "the team's memories")
        assert await asyncio.to_thread(items, browser) == [("The team deploys on Thursdays", None)]
        await wait_for(browser, lambda b: not switched_on(b), "the team's digest shown off")
    assert await asyncio.to_thread(severe_logs, browser) == []
