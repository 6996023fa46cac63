"""The dashboard's tasks page (`/admin/tasks`) in a real headless Chromium over the stack's
database and Redis: every active task with where it answers, a check-in marked as one, what
each spent today against its cap (one past its cap marked, and named in the summary, as the
scheduler would not run it again today), its prompt shown as text, never as markup; Cancel
ends a task, which then shows only among the ended ones. No script fails."""

from __future__ import annotations

import asyncio
import zoneinfo
from datetime import UTC, datetime

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from adapters.platforms.targets import target_of
from bot.tasks.book import NewTask, TaskBook
from bot.tasks.model import Task
from bot.tasks.spend import TaskSpend
from bot.vocabulary.envelope import Sender, task_run_id
from bot.vocabulary.schedule import parse_when
from tests.support.browser import screenshot, severe_logs, wait_for
from tests.support.chat_tasks import task_book
from tests.support.stack import Stack

ANN = Sender(id="tg:1", name="Ann")
ROWS = """return [...document.querySelectorAll('#tasks tbody tr')].map((r) =>
  [r.dataset.id, ...[...r.cells].map((c) => c.textContent)]);"""
BUILD = "look at the <b>build</b> and tell me only if it failed"


async def made(book: TaskBook, session: str, prompt: str, **more: object) -> Task:
    now = datetime.now(UTC)
    new = NewTask(
        target=target_of(session), creator=ANN, prompt=prompt, when="every 2h",
        schedule=parse_when("every 2h", zoneinfo.ZoneInfo("UTC"), now), **more,  # type: ignore[arg-type]
    )  # fmt: skip
    return await book.add(new, max_active=20, now=now)


def rows(browser: WebDriver) -> dict[str, list[str]]:
    """The listed tasks' cells after the first, by task id."""
    return {str(r[0]): [str(c) for c in r[2:]] for r in browser.execute_script(ROWS)}


def three(browser: WebDriver) -> dict[str, list[str]] | None:
    """The listed tasks once there are three."""
    found = rows(browser)
    return found if len(found) == 3 else None


def capped(browser: WebDriver, task_id: int) -> bool:
    spend = browser.find_element(By.CSS_SELECTOR, f'#tasks tr[data-id="{task_id}"] td.spend')
    return "capped" in str(spend.get_attribute("class"))


async def test_the_tasks_page_shows_each_tasks_spend_and_cancels_one(
    stack: Stack, browser: WebDriver
) -> None:
    async with task_book(stack) as book:
        check_in = await made(book, "tg:1", BUILD, quiet=True)
        capped_task = await made(book, "tg:-100", "post the standup", tokens_per_day=100)
        plain = await made(book, "tg:1", "water the plants")
        spend = TaskSpend(book.redis)
        await spend.charge(task_run_id(check_in.id, 1.0), 4_591)
        await spend.charge(task_run_id(capped_task.id, 1.0), 150)
    await asyncio.to_thread(browser.set_window_size, 1400, 900)
    await asyncio.to_thread(browser.get, stack.base_url + "/admin/tasks")
    listed = await wait_for(browser, three, "three tasks")
    where, who, what, when, _, runs, tokens, status, action = listed[str(check_in.id)]
    assert (where, who, when, runs, status, action) == (
        "tg:1", "Ann", "every 2h (UTC)", "0", "active", "Cancel",
    )  # fmt: skip
    assert what == f"check-in{BUILD}"  # the badge, then the prompt as text
    assert not await asyncio.to_thread(browser.find_elements, By.CSS_SELECTOR, "#tasks td b")
    assert tokens == "4,591 of 100,000"
    assert listed[str(capped_task.id)][6] == "150 of 100"
    assert await asyncio.to_thread(capped, browser, capped_task.id)
    assert not await asyncio.to_thread(capped, browser, plain.id)
    summary = await asyncio.to_thread(lambda: browser.find_element(By.ID, "spend").text)
    assert summary == (
        f"3 tasks · 1 of these check-ins · 4,741 tokens spent today by these · "
        f"1 at its daily cap (#{capped_task.id})"
    )

    cancel = f'#tasks tr[data-id="{plain.id}"] button'
    await asyncio.to_thread(lambda: browser.find_element(By.CSS_SELECTOR, cancel).click())
    await wait_for(browser, lambda b: str(plain.id) not in rows(b), "the task cancelled")
    async with task_book(stack) as book:
        ended = await book.get(plain.id)
    assert ended is not None and ended.status == "cancelled"
    await asyncio.to_thread(lambda: browser.find_element(By.ID, "all").click())
    shown = await wait_for(browser, three, "ended ones too")
    assert shown[str(plain.id)][7:] == ["cancelled", ""]
    assert "status=all" in await asyncio.to_thread(lambda: browser.current_url)
    await asyncio.to_thread(screenshot, browser, "admin-tasks.png")
    assert await asyncio.to_thread(severe_logs, browser) == []
