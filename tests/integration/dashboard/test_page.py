"""The dashboard (`/admin`) in a real headless Chromium, over runs a real worker made with the
fake model: one with a tool call, one the provider failed, one plain answer. The list shows
them, a click draws a run's trace as the API describes it, a node's details open, every chart
has data, the filters narrow the list, no script fails, and the API token is asked for,
refused when wrong and kept for the next visit. A run stopped mid-answer shows the tokens its
model calls used. Paging and a link with filters are shown over runs written straight to the
record, thirty being many turns to run for a list."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import httpx
import pytest
from selenium.webdriver.chromium.webdriver import ChromiumDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select

from bot.config.settings import Settings
from bot.store.database import open_database
from tests.fakes.llm import Fail, Reply, ToolCallSpec
from tests.support.browser import screenshot, severe_logs, wait_for
from tests.support.runs import Seed, record
from tests.support.stack import Stack, read_events, send
from tests.support.waiting import until

CHARTS = ("chart-success", "chart-latency", "chart-tools", "chart-errors", "chart-reliability")
TOKEN = "a-dashboard-token"


async def recorded(client: httpx.AsyncClient, session: str, runs: int) -> None:
    """Wait for the session's record to hold `runs` runs: a run is written after its reply."""

    async def written() -> bool:
        return bool((await client.get(f"/api/sessions/{session}")).json().get("runs") == runs)

    await until(written, f"{runs} runs of {session} recorded")


def rows(browser: WebDriver) -> list[str]:
    """The listed runs' ids, read in one go (the list may be redrawn meanwhile)."""
    script = "return [...document.querySelectorAll('#runs tbody tr')].map((r) => r.dataset.id)"
    return [str(run) for run in browser.execute_script(script)]


CHART_DATA = """
const out = {};
for (const id of arguments[0]) {
  const chart = Chart.getChart(document.getElementById(id));
  const data = chart ? chart.data.datasets.map((d) => d.data) : null;
  out[id] = chart ? {labels: chart.data.labels, data} : null;
}
return out;
"""


def chart_data(browser: WebDriver) -> dict[str, Any]:
    """Each chart's labels and its datasets' data, as Chart.js holds them."""
    return dict(browser.execute_script(CHART_DATA, list(CHARTS)))


def all_charts(browser: WebDriver) -> dict[str, Any] | None:
    data = chart_data(browser)
    return data if all(data.values()) else None


def pairs(chart: dict[str, Any]) -> dict[str, Any]:
    return dict(zip(chart["labels"], chart["data"][0], strict=True))


def drawn(browser: WebDriver) -> object:
    return browser.execute_script("return document.body.dataset.trace || null")


def node_details(browser: WebDriver) -> str | None:
    panel = browser.find_element(By.ID, "node")
    return str(panel.text) if panel.is_displayed() else None


async def make_runs(stack: Stack) -> tuple[str, str, str]:
    """The ids of three runs: a tool call, a provider failure, a plain answer."""
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "12*12"})]),
        Reply(text="It is 144."),
        Fail(400, "invalid_request_error", "this request is refused"),
        Reply(text="Hello."),
    )
    async with stack.client() as client:
        maths = await stack.session(client)
        await send(client, maths, "what is 12*12?")
        await recorded(client, maths, 1)
        await send(client, maths, "and now fail")
        await recorded(client, maths, 2)
        other = await stack.session(client)
        await send(client, other, "hello there")
        await recorded(client, other, 1)
        listed = (await client.get("/api/metrics/runs")).json()["items"]
    plain, failed, tool = (run["id"] for run in listed)
    assert [r["status"] for r in listed] == ["completed", "failed", "completed"]
    return tool, failed, plain


def text_of(browser: WebDriver, element_id: str) -> str:
    return str(browser.find_element(By.ID, element_id).text)


def click(browser: WebDriver, selector: str) -> None:
    browser.find_element(By.CSS_SELECTOR, selector).click()


async def check_charts(browser: WebDriver) -> None:
    """Every chart drawn with the three runs' numbers."""
    charts = await wait_for(browser, all_charts, "every chart drawn")
    rates, counts = charts["chart-success"]["data"]
    assert sum(counts) == 3 and any(rate is not None and 0 < rate < 100 for rate in rates)
    assert sum(charts["chart-latency"]["data"][0]) == 3
    assert pairs(charts["chart-tools"]) == {"calculator": 1}
    assert pairs(charts["chart-errors"]) == {"error": 1}
    assert any(score is not None and score > 0 for score in charts["chart-reliability"]["data"][0])


async def check_trace(browser: WebDriver, run: str, graph: dict[str, Any]) -> None:
    """A click on the run draws its graph as the API gave it, with its numbers."""
    await asyncio.to_thread(click, browser, f'#runs tr[data-id="{run}"]')
    await wait_for(browser, lambda b: drawn(b) == run, "the trace drawn")
    nodes = await asyncio.to_thread(browser.find_elements, By.CSS_SELECTOR, "#graph g.node")
    assert len(nodes) == len(graph["nodes"]) == 3
    edges = await asyncio.to_thread(browser.find_elements, By.CSS_SELECTOR, "#graph path.edge")
    kinds = await asyncio.to_thread(lambda: [e.get_attribute("class") for e in edges])
    assert kinds == [f"edge {e['type']}" for e in graph["edges"]]
    metrics = await asyncio.to_thread(text_of, browser, "run-metrics")
    assert "reliability\n100" in metrics and "steps\n3" in metrics
    assert f"iterations\n{graph['run']['iterations']}" in metrics
    for state, what in (("calling", "calling the model"), ("tools", "running tools")):
        assert f"{what}\n{duration(graph['metrics']['states'][state])}" in metrics
    assert "calculator × 1" in await asyncio.to_thread(text_of, browser, "run-tools")


TIME_BAR = """return [...document.querySelectorAll('#t-states span')].map((part) =>
  [part.dataset.state, part.getBoundingClientRect().width, part.title]);"""


async def check_time_spent(browser: WebDriver, stack: Stack) -> None:
    """The window's iterations and its average run split by where its time went, as the
    runs list gives them: a part of the bar per state with time, as wide as its share."""
    async with stack.client() as client:
        page = (await client.get("/api/metrics/runs")).json()
    shown = f"{page['average_iterations']:.1f} / {page['max_iterations']}"
    assert await asyncio.to_thread(text_of, browser, "t-iterations") == shown
    parts = await asyncio.to_thread(browser.execute_script, TIME_BAR)
    spent = {state: ms for state, ms in page["average_states_ms"].items() if ms}
    assert [state for state, _, _ in parts] == list(spent) and "calling" in spent
    whole = sum(width for _, width, _ in parts)
    for state, width, title in parts:
        assert abs(width / whole - spent[state] / sum(spent.values())) < 0.02, (state, parts)
        assert duration(spent[state]) in title
    note = await asyncio.to_thread(text_of, browser, "t-states-note")
    assert f"calling the model {duration(spent['calling'])}" in note


def duration(ms: float) -> str:
    """A duration under a minute as the dashboard writes it (`admin-trace.js: duration`)."""
    if ms < 1000:
        return f"{math.floor(ms + 0.5)} ms"
    shown = f"{ms / 1000:.{2 if ms < 10_000 else 1}f}".rstrip("0").rstrip(".")
    return f"{shown} s"


async def check_node_and_timeline(browser: WebDriver) -> None:
    """A node's details open on a click; the timeline has a bar per node."""
    await asyncio.to_thread(click, browser, '#graph g.node[data-id="2"]')
    details = await wait_for(browser, node_details, "the node's details")
    assert "tool_call: calculator" in details and "12*12" in details and "status\nok" in details
    assert "Result\n144" in details  # what the call gave back, above the node's JSON
    await asyncio.to_thread(click, browser, "[data-view=timeline]")
    bars = await wait_for(
        browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#timeline g.bar"), "bars"
    )
    assert len(bars) == 3


def only_failed(browser: WebDriver) -> None:
    Select(browser.find_element(By.ID, "f-outcome")).select_by_value("failed")
    browser.find_element(By.ID, "apply").click()


async def test_the_dashboard_lists_runs_draws_a_trace_and_charts(
    stack: Stack, browser: WebDriver
) -> None:
    tool, failed, plain = await make_runs(stack)
    async with stack.client() as client:
        graph = (await client.get(f"/api/traces/{tool}/graph")).json()
    await asyncio.to_thread(browser.set_window_size, 1400, 1000)
    await asyncio.to_thread(browser.get, stack.base_url + "/admin")
    listed = await wait_for(browser, lambda b: len(rows(b)) == 3 and rows(b), "three runs listed")
    assert listed == [plain, failed, tool]
    table = await asyncio.to_thread(text_of, browser, "runs")
    assert "what is 12*12?" in table and "hello there" in table and "failed" in table
    assert await asyncio.to_thread(text_of, browser, "t-runs") == "3"
    await check_time_spent(browser, stack)
    await check_charts(browser)
    await check_trace(browser, tool, graph)
    await check_node_and_timeline(browser)
    await asyncio.to_thread(screenshot, browser, "admin.png")

    await asyncio.to_thread(only_failed, browser)
    assert await wait_for(
        browser, lambda b: rows(b) == [failed] and rows(b), "the failed run alone"
    )
    assert "outcome=failed" in await asyncio.to_thread(lambda: browser.current_url)
    assert await asyncio.to_thread(severe_logs, browser) == []


async def stopped_run(stack: Stack, client: httpx.AsyncClient) -> str:
    """A session whose run, after a tool call, is stopped while its second answer streams."""
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "12*12"})], output_tokens=7),
        Reply(text="It is one hundred and forty-four.", chunk_size=3, gate=gate, gate_after=5),
    )
    session = await stack.session(client)
    streaming = asyncio.Event()

    async def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "text_delta":
            streaming.set()

    async def follow() -> list[dict[str, Any]]:
        path = f"/api/sessions/{session}/messages"
        async with client.stream("POST", path, json={"text": "what is 12*12?"}) as response:
            return await read_events(response, on_event)

    turn = asyncio.create_task(follow())
    await until(streaming.is_set, "the answer streaming")
    assert (await client.post(f"/api/sessions/{session}/stop")).status_code == 202
    ended = (await turn)[-1]
    gate.set()
    assert ended["type"] == "completed" and ended["finish_reason"] == "cancelled"
    await recorded(client, session, 1)
    return session


async def test_a_stopped_run_shows_the_tokens_its_model_calls_used(
    stack: Stack, browser: WebDriver
) -> None:
    """A run stopped mid-answer is charged what its model calls used: the call that
    finished, and what the cut one's model said when it began (Anthropic's `message_start`:
    the prompt read, cached or not, and the first output token)."""
    await stack.start_worker()
    async with stack.client() as client:
        await stopped_run(stack, client)
        [run] = (await client.get("/api/metrics/runs")).json()["items"]
        trace = (await client.get(f"/api/traces/{run['id']}")).json()
    first, cut = (request.usage for request in stack.fake.requests)
    assert first is not None and cut is not None
    assert run["status"] == "stopped"
    tokens = {"input": first.input_tokens + cut.input_tokens, "output": 7 + 1}
    assert run["tokens"] == tokens
    calls = [node["detail"]["usage"] for node in trace["nodes"] if "usage" in node["detail"]]
    assert calls == [
        {"input_tokens": used.input_tokens, "output_tokens": out,
         "cache_read_tokens": used.cache_read, "cache_write_tokens": used.cache_write}
        for used, out in ((first, 7), (cut, 1))
    ]  # fmt: skip
    assert cut.cache_read + cut.cache_write > 0  # the cut call read the whole prompt

    await asyncio.to_thread(browser.get, stack.base_url + "/admin")
    await wait_for(browser, lambda b: rows(b) == [run["id"]], "the stopped run listed")
    shown = await asyncio.to_thread(text_of, browser, "runs")
    assert f"{tokens['input']} / {tokens['output']}" in shown and "stopped" in shown


def token_note(browser: WebDriver) -> str:
    form = browser.find_element(By.ID, "auth")
    return str(form.text) if form.is_displayed() else ""


def give_token(browser: WebDriver, token: str) -> None:
    browser.find_element(By.ID, "token").send_keys(token)
    browser.find_element(By.ID, "unlock").click()


def kept_token(browser: WebDriver) -> object:
    return browser.execute_script("return localStorage.getItem('parley.apiToken')")


@pytest.mark.parametrize("stack", [{"PARLEY_API_TOKEN": TOKEN}], indirect=True)
async def test_the_dashboard_asks_for_the_token_and_keeps_it(
    stack: Stack, browser: WebDriver
) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="Hello with a token."))
    async with stack.client(headers={"Authorization": f"Bearer {TOKEN}"}) as client:
        session = await stack.session(client)
        await send(client, session, "hello")
        await recorded(client, session, 1)
    await asyncio.to_thread(browser.get, stack.base_url + "/admin")
    note = await wait_for(browser, token_note, "the question for the token")
    assert "PARLEY_API_TOKEN" in note and "refused" not in note
    assert await asyncio.to_thread(rows, browser) == []

    await asyncio.to_thread(give_token, browser, "not-the-token")
    await wait_for(browser, lambda b: "refused" in token_note(b), "the wrong token refused")
    assert await asyncio.to_thread(kept_token, browser) is None
    await asyncio.to_thread(give_token, browser, TOKEN)
    await wait_for(browser, lambda b: len(rows(b)) == 1, "the run listed")
    assert await asyncio.to_thread(kept_token, browser) == TOKEN

    await asyncio.to_thread(browser.refresh)  # the kept token serves: nothing is asked
    await wait_for(browser, lambda b: len(rows(b)) == 1, "the run listed again")
    await wait_for(
        browser, lambda b: b.execute_script("return document.body.dataset.loaded"), "loaded"
    )
    assert await asyncio.to_thread(token_note, browser) == ""
    script_errors = [
        e
        for e in await asyncio.to_thread(severe_logs, browser)
        if "status of 401" not in e["message"]
    ]
    assert script_errors == []  # the refused calls are logged as such; nothing else failed


async def test_the_dashboard_pages_and_keeps_its_filters_in_its_address(
    stack: Stack, browser: WebDriver, database_url: str
) -> None:
    now = time.time()
    seeds = [
        Seed(f"tg:{n}", "telegram" if n % 2 else "slack", f"chat {n}", f"m{n}", started_at=now - n)
        for n in range(30)
    ]
    database = await open_database(Settings(_env_file=None, database_url=database_url))
    try:
        ids = await record(database.history, *seeds)
    finally:
        await database.aclose()
    await asyncio.to_thread(browser.get, stack.base_url + "/admin")
    await wait_for(browser, lambda b: rows(b) == ids[:25], "the newest 25 runs")
    assert await asyncio.to_thread(text_of, browser, "page-note") == "1–25 of 30"
    await asyncio.to_thread(click, browser, "#older")
    await wait_for(browser, lambda b: rows(b) == ids[25:], "the oldest 5 runs")
    assert await asyncio.to_thread(text_of, browser, "page-note") == "26–30 of 30"
    assert (
        await asyncio.to_thread(lambda: browser.find_element(By.ID, "older").is_enabled()) is False
    )

    await asyncio.to_thread(browser.get, stack.base_url + "/admin?platform=telegram&q=chat+1")
    telegram = [run for n, run in enumerate(ids) if n % 2 and f"chat {n}".startswith("chat 1")]
    assert len(telegram) == 6  # chat 1, 11, 13, 15, 17, 19
    await wait_for(browser, lambda b: rows(b) == telegram, "the telegram chats with a 1")
    chosen = await asyncio.to_thread(lambda: Select(browser.find_element(By.ID, "f-platform")))
    assert await asyncio.to_thread(lambda: chosen.first_selected_option.text) == "telegram"
    assert await asyncio.to_thread(severe_logs, browser) == []


# Notes when Chart.js has run: the UMD build ends by setting `window.Chart`.
CHART_CLOCK = """
let chart;
Object.defineProperty(window, "Chart", {
  configurable: true,
  get: () => chart,
  set: (value) => { chart = value; window.chartLibraryRan = performance.now(); },
});
"""
ASKED = """return performance.getEntriesByType("resource")
  .filter((e) => e.name.includes("/api/metrics/")).map((e) => e.startTime);"""


async def test_the_dashboard_asks_for_its_numbers_before_it_runs_the_charts_library(
    stack: Stack, browser: WebDriver
) -> None:
    """Chart.js is 200 KB of script to run: the page sends its three requests first, so the
    server works out the numbers while the browser runs it, and the charts still draw."""
    assert isinstance(browser, ChromiumDriver)
    source = {"source": CHART_CLOCK}
    await asyncio.to_thread(
        browser.execute_cdp_cmd, "Page.addScriptToEvaluateOnNewDocument", source
    )
    await asyncio.to_thread(browser.get, stack.base_url + "/admin")
    await wait_for(
        browser, lambda b: b.execute_script("return document.body.dataset.loaded"), "loaded"
    )
    ran = await asyncio.to_thread(browser.execute_script, "return window.chartLibraryRan")
    asked = await asyncio.to_thread(browser.execute_script, ASKED)
    assert len(asked) == 3 and ran is not None
    assert max(asked) < ran, (asked, ran)
    drawn = await asyncio.to_thread(chart_data, browser)
    assert all(drawn[chart] is not None for chart in CHARTS), drawn
    assert await asyncio.to_thread(severe_logs, browser) == []
