"""The dashboard (`/admin`) follows what runs ran with, in a real headless Chromium over runs
written to the record the way a worker writes them, of two configurations and one recorded
before runs kept theirs: the list filtered by mode and by tool set (the hashes shown short,
whole in a tooltip), the runs grouped by prompt and a group's click filtering the list, a link
that names its runs showing those alone until it is cleared, and a run's panel with what it
ran with ("not recorded" for the old one). And the auto refresh: a run recorded after the page
loaded is listed without a click, a tick while a load is in flight sends nothing, and the
open run's panel stays as it was."""

from __future__ import annotations

import asyncio
import time

import pytest
from selenium.webdriver.chromium.webdriver import ChromiumDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from bot.config.settings import Settings
from bot.store.database import open_database
from tests.integration.dashboard.test_page import click, drawn, node_details, rows, text_of
from tests.support.browser import screenshot, severe_logs, wait_for
from tests.support.runs import Seed, ran_with, record
from tests.support.stack import Stack

PLAIN = ran_with("claude-test", "react", ("calculator",))
PLANNED = ran_with("claude-test", "plan_execute", ("calculator", "web_search"), "Be brief.")


# What the planned runs' panel says they ran with, line by line.
CONFIG_TABLE = (
    "model claude-test", "mode plan_execute", "tools calculator, web_search",
    f"tool set {PLANNED.tools_hash[:8]}", "schema no", "timeout 1 min",
    "budget tokens 5000, steps 8", "reasoning off", "sampling temperature 0.3", "retries 2",
    f"prompt {PLANNED.prompt.hash[:8]}",
)  # fmt: skip


async def seeded(database_url: str, *seeds: Seed) -> list[str]:
    database = await open_database(Settings(_env_file=None, database_url=database_url))
    try:
        return await record(database.history, *seeds)
    finally:
        await database.aclose()


def runs_of_two_configs(now: float) -> list[Seed]:
    """Newest first: two plain runs, two planned ones (one failed), one recorded before."""
    configs = (PLAIN, PLANNED, PLAIN, PLANNED, None)
    return [
        Seed(f"tg:{n}", "telegram", f"chat {n}", f"m{n}", started_at=now - 60 * (n + 1),
             config=config, finish="error" if n == 3 else "end_turn",
             error="it failed" if n == 3 else None)
        for n, config in enumerate(configs)
    ]  # fmt: skip


def choose(browser: WebDriver, field: str, value: str) -> None:
    Select(browser.find_element(By.ID, field)).select_by_value(value)


def apply(browser: WebDriver, **chosen: str) -> None:
    for name, value in chosen.items():
        choose(browser, f"f-{name}", value)
    browser.find_element(By.ID, "apply").click()


def option_shown(browser: WebDriver, field: str, value: str) -> tuple[str, str]:
    found = browser.find_element(By.CSS_SELECTOR, f'#{field} option[value="{value}"]')
    return str(found.text), str(found.get_attribute("title"))


def groups(browser: WebDriver) -> list[list[str]]:
    """The groups' table, row by row: the key's tooltip (the whole key), then each cell."""
    script = """return [...document.querySelectorAll('#group-rows tr')].map((row) =>
      [row.cells[0].title, ...[...row.cells].map((cell) => cell.textContent)]);"""
    return [list(map(str, row)) for row in browser.execute_script(script)]


def grouped_by(browser: WebDriver, by: str) -> list[list[str]] | None:
    """The groups' table once it shows the runs grouped `by`."""
    shown = browser.execute_script("return document.getElementById('groups').dataset.by")
    return groups(browser) if shown == by else None


def address(browser: WebDriver) -> str:
    return str(browser.current_url)


async def check_filters(browser: WebDriver, plain: list[str], planned: list[str]) -> None:
    await asyncio.to_thread(apply, browser, mode="plan_execute")
    await wait_for(browser, lambda b: rows(b) == planned, "the planned runs alone")
    assert "mode=plan_execute" in await asyncio.to_thread(address, browser)
    assert await asyncio.to_thread(option_shown, browser, "f-tools", PLAIN.tools_hash) == (
        PLAIN.tools_hash[:8],
        PLAIN.tools_hash,
    )
    await asyncio.to_thread(apply, browser, mode="", tools=PLAIN.tools_hash)
    await wait_for(browser, lambda b: rows(b) == plain, "the runs of the plain tool set")
    assert f"tools={PLAIN.tools_hash}" in await asyncio.to_thread(address, browser)
    await asyncio.to_thread(apply, browser, tools="")


async def check_groups(browser: WebDriver, ids: list[str], planned: list[str]) -> None:
    await asyncio.to_thread(choose, browser, "g-by", "prompt")
    by_prompt = await wait_for(browser, lambda b: grouped_by(b, "prompt"), "the runs by prompt")
    hashes = sorted([PLAIN.prompt.hash, PLANNED.prompt.hash])
    assert [row[1] for row in by_prompt] == [*(key[:8] for key in hashes), "not recorded"]
    assert [row[0] for row in by_prompt][:2] == hashes  # the whole hash, as a tooltip
    assert [row[2] for row in by_prompt] == ["2", "2", "1"]  # runs
    planned_row = next(row for row in by_prompt if row[0] == PLANNED.prompt.hash)
    assert planned_row[3] == "50%" and planned_row[6] == "200 / 40"
    assert "group=prompt" in await asyncio.to_thread(address, browser)
    key = PLANNED.prompt.hash
    await asyncio.to_thread(click, browser, f'#group-rows tr[data-key="{key}"]')
    await wait_for(browser, lambda b: rows(b) == planned, "the runs of the planned prompt")
    assert f"prompt={key}" in await asyncio.to_thread(address, browser)
    value = await asyncio.to_thread(lambda: browser.find_element(By.ID, "f-prompt"))
    assert await asyncio.to_thread(value.get_attribute, "value") == key
    assert await asyncio.to_thread(text_of, browser, "t-runs") == "2"
    await wait_for(browser, lambda b: [r[2] for r in groups(b)] == ["2"], "one group left")


async def check_restriction(
    stack: Stack, browser: WebDriver, ids: list[str], chosen: list[str]
) -> None:
    link = f"{stack.base_url}/admin?runs={','.join(reversed(chosen))}&group=tools"
    await asyncio.to_thread(browser.get, link)
    await wait_for(browser, lambda b: rows(b) == chosen, "the chosen runs alone")
    by_tools = await wait_for(browser, lambda b: grouped_by(b, "tools"), "their tool sets")
    assert [row[1:3] for row in by_tools] == [[PLANNED.tools_hash[:8], "1"], ["not recorded", "1"]]
    note = await asyncio.to_thread(text_of, browser, "restricted")
    assert "Only the 2 runs this link names are shown" in note and "Show all runs" in note
    disabled = await asyncio.to_thread(lambda: browser.find_element(By.ID, "f-range"))
    assert await asyncio.to_thread(disabled.is_enabled) is False
    assert await asyncio.to_thread(text_of, browser, "t-runs") == "2"
    await asyncio.to_thread(click, browser, "#unrestrict")
    await wait_for(browser, lambda b: rows(b) == ids, "every run again")
    assert "runs=" not in await asyncio.to_thread(address, browser)
    shown = await asyncio.to_thread(lambda: browser.find_element(By.ID, "restricted"))
    assert await asyncio.to_thread(shown.is_displayed) is False
    await asyncio.to_thread(click, browser, "#keep")  # the page's runs, as a link of its own
    await wait_for(browser, lambda b: f"runs={','.join(ids)}" in address(b), "a link to them")
    await wait_for(browser, lambda b: "Only the 5 runs" in text_of(b, "restricted"), "its note")


async def check_config_table(browser: WebDriver, planned: str, old: str) -> None:
    await asyncio.to_thread(click, browser, f'#runs tr[data-id="{planned}"]')
    await wait_for(browser, lambda b: drawn(b) == planned, "the planned run's trace")
    table = await asyncio.to_thread(text_of, browser, "run-config")
    for line in CONFIG_TABLE:
        assert line in table, (line, table)
    await asyncio.to_thread(screenshot, browser, "admin-run-config.png")
    await asyncio.to_thread(click, browser, f'#runs tr[data-id="{old}"]')
    await wait_for(browser, lambda b: drawn(b) == old, "the old run's trace")
    unrecorded = await asyncio.to_thread(text_of, browser, "run-config")
    assert unrecorded == "Ran with\nran with not recorded"


async def test_the_dashboard_filters_groups_and_restricts_runs_by_what_they_ran_with(
    stack: Stack, browser: WebDriver, database_url: str
) -> None:
    ids = await seeded(database_url, *runs_of_two_configs(time.time()))
    plain, planned = [ids[0], ids[2]], [ids[1], ids[3]]
    await asyncio.to_thread(browser.set_window_size, 1400, 1000)
    await asyncio.to_thread(browser.get, stack.base_url + "/admin")
    await wait_for(browser, lambda b: rows(b) == ids, "the five runs")
    await check_filters(browser, plain, planned)
    await wait_for(browser, lambda b: rows(b) == ids, "the five runs again")
    await check_groups(browser, ids, planned)
    await asyncio.to_thread(screenshot, browser, "admin-groups.png")
    await check_restriction(stack, browser, ids, [ids[1], ids[4]])
    await check_config_table(browser, ids[1], ids[4])
    assert await asyncio.to_thread(severe_logs, browser) == []


# The browser's fetch, wrapped to count the dashboard's calls and to hold the runs' answers
# while `window.hold` is set (a slow server), until `window.release()`.
SLOW_SERVER = """
window.calls = [];
window.held = [];
window.hold = false;
const sent = window.fetch.bind(window);
window.fetch = async (input, options) => {
  const call = { url: String(input), done: false };
  window.calls.push(call);
  const answer = await sent(input, options);
  if (window.hold && call.url.includes("/api/metrics/runs")) {
    await new Promise((resolve) => window.held.push(resolve));
  }
  call.done = true;
  return answer;
};
window.release = () => { window.hold = false; for (const go of window.held.splice(0)) go(); };
"""
CALLS = """return window.calls.filter((c) => c.url.includes(arguments[0]))
  .map((c) => c.done);"""
KEPT = """const graph = document.getElementById("graph");
return Boolean(graph && graph.keptByTheTest);"""


def calls(browser: WebDriver, path: str) -> list[bool]:
    """Whether each call to `path` the page made has its answer."""
    return [bool(done) for done in browser.execute_script(CALLS, path)]


def waiting(browser: WebDriver, path: str) -> list[bool] | None:
    """The calls to `path`, once the last of them, and it alone, waits for its answer."""
    made = calls(browser, path)
    return made if made and made[-1] is False and made.count(False) == 1 else None


def skipped(browser: WebDriver) -> int:
    return int(browser.execute_script("return document.body.dataset.skipped || '0'"))


TICK_S = 10


@pytest.mark.slow(25)
async def test_the_auto_refresh_lists_new_runs_without_stacking_requests(
    stack: Stack, browser: WebDriver, database_url: str
) -> None:
    (first,) = await seeded(database_url, Seed("tg:1", "telegram", "first", "m1", config=PLAIN))
    assert isinstance(browser, ChromiumDriver)
    await asyncio.to_thread(
        browser.execute_cdp_cmd, "Page.addScriptToEvaluateOnNewDocument", {"source": SLOW_SERVER}
    )
    await asyncio.to_thread(browser.get, stack.base_url + f"/admin?refresh={TICK_S}")
    await wait_for(browser, lambda b: rows(b) == [first], "the first run")
    refresh = await asyncio.to_thread(lambda: Select(browser.find_element(By.ID, "f-refresh")))
    assert await asyncio.to_thread(lambda: refresh.first_selected_option.text) == "every 10 s"
    await asyncio.to_thread(click, browser, f'#runs tr[data-id="{first}"]')
    await wait_for(browser, lambda b: drawn(b) == first, "its trace")
    await asyncio.to_thread(click, browser, "#graph g.node")
    details = await wait_for(browser, node_details, "a node's details")
    await asyncio.to_thread(
        browser.execute_script, "document.getElementById('graph').keptByTheTest = true"
    )
    await asyncio.to_thread(browser.execute_script, "window.hold = true")
    skips = await asyncio.to_thread(skipped, browser)

    (second,) = await seeded(database_url, Seed("tg:2", "telegram", "second", "m2"))
    held = await wait_for(browser, lambda b: waiting(b, "/api/metrics/runs"), "a tick, held", 20)
    charts = len(await asyncio.to_thread(calls, browser, "/api/metrics/series"))
    await asyncio.sleep(TICK_S + 1)  # the next tick comes while the answer is held
    assert await asyncio.to_thread(calls, browser, "/api/metrics/runs") == held
    assert len(await asyncio.to_thread(calls, browser, "/api/metrics/series")) == charts
    assert await asyncio.to_thread(skipped, browser) > skips
    await asyncio.to_thread(browser.execute_script, "window.release()")
    await wait_for(browser, lambda b: rows(b) == [second, first], "the new run listed", 30)

    assert await asyncio.to_thread(drawn, browser) == first
    assert await asyncio.to_thread(browser.execute_script, KEPT) is True  # not drawn again
    assert await asyncio.to_thread(node_details, browser) == details
    selected = await asyncio.to_thread(browser.find_elements, By.CSS_SELECTOR, "#runs tr.selected")
    assert [await asyncio.to_thread(row.get_attribute, "data-id") for row in selected] == [first]
    assert f"refresh={TICK_S}" in await asyncio.to_thread(address, browser)
    assert await asyncio.to_thread(severe_logs, browser) == []
