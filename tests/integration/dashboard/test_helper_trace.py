"""The dashboard (`/admin`) draws a helper's trace under its parent's, in a real headless
Chromium, over a turn a real worker ran with the fake model: the parent's `delegate` call
started a helper that called a tool and answered. The helper's trace is fetched when its
panel opens (here, by a click on the call's node), drawn as its own graph as the API gives
it, and a node of it opens its details, naming the helper's run."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec
from tests.support.browser import screenshot, severe_logs, wait_for
from tests.support.stack import Stack, send
from tests.support.waiting import until


def answer(request: RecordedRequest) -> Reply:
    """The parent delegates "job 7"; the helper works it out with the calculator."""
    helper = "job 7" in str(request.body["messages"][0]["content"])
    if helper and request.tool_results():
        return Reply(text="It is 144.")
    if helper:
        return Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "12*12"})])
    if request.tool_results():
        return Reply(text="The helper says 144.")
    return Reply(tool_calls=[ToolCallSpec("delegate", {"task": "do job 7: what is 12*12?"})])


async def both_runs(client: httpx.AsyncClient) -> dict[str, str]:
    """The parent's and the helper's run ids, by trigger, once both are recorded."""
    found: dict[str, str] = {}

    async def listed() -> bool:
        items = (await client.get("/api/metrics/runs")).json()["items"]
        found.update({run["trigger"]: run["id"] for run in items})
        return len(items) == 2

    await until(listed, "the parent's and the helper's runs recorded")
    return found


def panels(browser: WebDriver) -> list[dict[str, Any]]:
    script = """return [...document.querySelectorAll('#helpers-box > details.helper')]
      .map((p) => ({run: p.dataset.run, node: p.dataset.node, open: p.open,
                    text: p.querySelector('summary').textContent}))"""
    return list(browser.execute_script(script))


def helper_nodes(browser: WebDriver, run: str) -> list[str]:
    found = browser.find_elements(By.CSS_SELECTOR, f"#helpers-box #graph-{run} g.node")
    return [str(node.get_attribute("data-id")) for node in found]


def drawn(browser: WebDriver) -> object:
    return browser.execute_script("return document.body.dataset.trace || null")


def node_details(browser: WebDriver) -> str | None:
    panel = browser.find_element(By.ID, "node")
    return str(panel.text) if panel.is_displayed() else None


def calculator_details(browser: WebDriver) -> str | None:
    shown = node_details(browser)
    return shown if shown is not None and "calculator" in shown else None


async def test_the_dashboard_draws_a_helpers_trace_under_its_call(
    stack: Stack, browser: WebDriver
) -> None:
    await stack.start_worker()
    stack.fake.responder = answer
    async with stack.client() as client:
        session = await stack.session(client)
        await send(client, session, "please delegate this")
        runs = await both_runs(client)
        parent, helper = runs["message"], runs["helper"]
        graph = (await client.get(f"/api/traces/{parent}/graph")).json()
        helper_graph = (await client.get(f"/api/traces/{helper}/graph")).json()
    (call,) = [n for n in graph["nodes"] if n["name"] == "delegate"]
    assert call["detail"]["helper_run"] == helper
    assert [n["name"] for n in helper_graph["nodes"]].count("calculator") == 1

    await asyncio.to_thread(browser.set_window_size, 1400, 1000)
    await asyncio.to_thread(browser.get, f"{stack.base_url}/admin?run={parent}")
    await wait_for(browser, lambda b: drawn(b) == parent, "the parent's trace drawn")
    (panel,) = await asyncio.to_thread(panels, browser)
    assert (panel["run"], panel["node"], panel["open"]) == (helper, str(call["id"]), False)
    assert "do job 7" in panel["text"]
    assert await asyncio.to_thread(helper_nodes, browser, helper) == []  # not fetched yet

    node = f'#graph g.node.has-helper[data-id="{call["id"]}"]'
    await asyncio.to_thread(lambda: browser.find_element(By.CSS_SELECTOR, node).click())
    nodes = await wait_for(browser, lambda b: helper_nodes(b, helper), "the helper's graph")
    assert nodes == [str(n["id"]) for n in helper_graph["nodes"]]
    assert (await asyncio.to_thread(panels, browser))[0]["open"]

    (calculator,) = [n for n in helper_graph["nodes"] if n["name"] == "calculator"]
    inner = f'#graph-{helper} g.node[data-id="{calculator["id"]}"]'
    await asyncio.to_thread(lambda: browser.find_element(By.CSS_SELECTOR, inner).click())
    details = await wait_for(browser, calculator_details, "the helper's call's details")
    assert f"helper run\n{helper}" in details and "Result\n144" in details
    await asyncio.to_thread(screenshot, browser, "admin-helper.png")
    assert await asyncio.to_thread(severe_logs, browser) == []
