"""Looking around a trace's graph on the dashboard (`/admin`), in a real headless Chromium, over
a run a real worker made with the fake model calling tools over five steps, so its graph is
wider than the panel. The graph opens showing all of itself; the wheel zooms in around the
pointer (the minimap shows, its frame shrunk to the part in view) and Fit shows it all again;
a drag pans by as many graph units as the pointer moved and opens no node, even one that
starts on a node; a click in the minimap centres the view there; the arrow keys pan. A search
marks exactly the nodes the API's trace says hold the query (a tool's name, a text of a
node's details), dims the rest, counts them, and Enter goes to the next, centred; a query
that matches nothing says so and dims nothing. A click on a node still opens its details,
and no script fails. Every figure is read from the page: the SVG's viewBox, its scale, the
minimap's frame, the classes on the nodes."""

from __future__ import annotations

import asyncio
from typing import Any

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver

from tests.fakes.llm import Reply, ToolCallSpec
from tests.integration.dashboard.test_page import drawn, node_details, recorded
from tests.support.browser import screenshot, severe_logs, wait_for
from tests.support.stack import Stack, send

CALCULATIONS = ("1+1", "2+3", "6*7", "8*9")
FAILURE, WORD = "gremlins in the pipes", "gremlins"  # WORD: in the failed call's error alone
SCRIPT = (
    Reply(tool_calls=[ToolCallSpec("calculator", {"expression": e}) for e in CALCULATIONS[:2]]),
    Reply(tool_calls=[ToolCallSpec("fail_loudly", {"detail": FAILURE})]),
    Reply(tool_calls=[ToolCallSpec("calculator", {"expression": CALCULATIONS[2]})]),
    Reply(tool_calls=[ToolCallSpec("calculator", {"expression": CALCULATIONS[3]})]),
    Reply(text="All done."),
)
CLOSE = 1.0  # graph units: how far two readings of one point may differ (attributes are rounded)

VIEW = """
const svg = document.getElementById('graph');
const view = svg.closest('.graph-view');
const box = svg.getBoundingClientRect();
const map = view.querySelector('.minimap svg');
const frame = map.querySelector('.mini-viewport');
const mbox = map.getBoundingClientRect();
const ids = (selector) => [...svg.querySelectorAll(selector)].map((g) => g.dataset.id);
const current = svg.querySelector('g.node.current');
return {
  viewBox: svg.getAttribute('viewBox').split(' ').map(Number),
  scale: Number(svg.dataset.scale || 0),
  box: {left: box.left, top: box.top, width: box.width, height: box.height},
  graph: map.getAttribute('viewBox').split(' ').map(Number).slice(2),
  mini: {
    shown: !view.querySelector('.minimap').hidden,
    frame: ['x', 'y', 'width', 'height'].map((a) => Number(frame.getAttribute(a))),
    box: {left: mbox.left, top: mbox.top, width: mbox.width, height: mbox.height},
    matched: [...map.querySelectorAll('.mini-node.match')].map((r) => r.dataset.id),
  },
  level: view.querySelector('.zoom-level').textContent,
  count: view.querySelector('.graph-count').textContent,
  nodes: ids('g.node'), matched: ids('g.node.match'), dimmed: ids('g.node.dimmed'),
  current: current ? current.dataset.id : null,
  at: current ? current.getAttribute('transform') : null,
  details: !document.getElementById('node').hidden,
};
"""
# A point of the graph's own background (no node, no edge, not the minimap), as an offset
# from the SVG's middle, for a drag that starts on nothing.
BACKGROUND = """
const svg = document.getElementById('graph');
const box = svg.getBoundingClientRect();
for (let y = box.top + 20; y < box.bottom - 20; y += 15) {
  for (let x = box.left + 20; x < box.right - 200; x += 15) {
    if (document.elementFromPoint(x, y) === svg) {
      return [Math.round(x - box.left - box.width / 2), Math.round(y - box.top - box.height / 2)];
    }
  }
}
return null;
"""
# A node wholly in view and not under anything, as [id, offset of its middle from the SVG's].
VISIBLE_NODE = """
const svg = document.getElementById('graph');
const box = svg.getBoundingClientRect();
for (const g of svg.querySelectorAll('g.node')) {
  const r = g.getBoundingClientRect();
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const inside = r.left > box.left && r.right < box.right
    && r.top > box.top && r.bottom < box.bottom;
  if (inside && document.elementFromPoint(x, y)?.closest('g.node') === g) {
    const dx = Math.round(x - box.left - box.width / 2);
    return [g.dataset.id, dx, Math.round(y - box.top - box.height / 2)];
  }
}
return null;
"""
WHEEL_SEEN = """
window.wheelSeen = null;
document.getElementById('graph').addEventListener('wheel', (e) => {
  window.wheelSeen = window.wheelSeen || [e.clientX, e.clientY];
}, {capture: true});
"""


def view(browser: WebDriver) -> dict[str, Any]:
    return dict(browser.execute_script(VIEW))


def scale_of(state: dict[str, Any]) -> float:
    """Screen px per graph unit, by the viewBox and the SVG's size (`data-scale` is rounded)."""
    return float(state["box"]["width"] / state["viewBox"][2])


def centre(state: dict[str, Any]) -> tuple[float, float]:
    x, y, w, h = state["viewBox"]
    return x + w / 2, y + h / 2


def graph_point(state: dict[str, Any], client_x: float, client_y: float) -> tuple[float, float]:
    """The graph point under a point of the window, by the viewBox."""
    x, y, w, h = state["viewBox"]
    box = state["box"]
    return (
        x + (client_x - box["left"]) * w / box["width"],
        y + (client_y - box["top"]) * h / box["height"],
    )


def node_middle(transform: str) -> tuple[float, float]:
    """The middle of a node's box (200×60) from its `translate(x,y)`."""
    x, y = transform.removeprefix("translate(").removesuffix(")").split(",")
    return float(x) + 100, float(y) + 30


def near(a: tuple[float, ...], b: tuple[float, ...], within: float = CLOSE) -> bool:
    return all(abs(p - q) <= within for p, q in zip(a, b, strict=True))


def holding(nodes: list[dict[str, Any]], query: str) -> list[str]:
    """The ids of the API's nodes whose name, kind or a text of their details hold `query`."""

    def texts(value: Any) -> list[str]:
        if isinstance(value, str):
            return [value]
        inner = value.values() if isinstance(value, dict) else value
        return [t for v in inner for t in texts(v)] if isinstance(value, dict | list) else []

    wanted = query.lower()
    return [
        str(node["id"])
        for node in nodes
        if any(wanted in t.lower() for t in [node["name"], node["kind"], *texts(node["detail"])])
    ]


def act(browser: WebDriver, build: Any) -> None:
    build(ActionChains(browser)).perform()


def press(browser: WebDriver, control: str) -> None:
    """A click on one of the run's graph's controls (its class)."""
    browser.find_element(By.CSS_SELECTOR, f"#graph-box .{control}").click()


def search(browser: WebDriver, text: str) -> None:
    field = browser.find_element(By.CSS_SELECTOR, "#graph-box .graph-find")
    field.clear()
    field.send_keys(text)


async def scripted_run(stack: Stack) -> tuple[str, list[dict[str, Any]]]:
    """The run of the scripted tool calls, and its trace's nodes as the API gives them."""
    await stack.start_worker()
    stack.fake.enqueue(*SCRIPT)
    async with stack.client() as client:
        session = await stack.session(client)
        await send(client, session, "work it all out")
        await recorded(client, session, 1)
        (run,) = (await client.get("/api/metrics/runs")).json()["items"]
        trace = (await client.get(f"/api/traces/{run['id']}")).json()
    return str(run["id"]), list(trace["nodes"])


async def open_run(browser: WebDriver, stack: Stack, run: str) -> dict[str, Any]:
    await asyncio.to_thread(browser.set_window_size, 1400, 1000)
    await asyncio.to_thread(browser.get, f"{stack.base_url}/admin?run={run}")
    await wait_for(browser, lambda b: drawn(b) == run, "the trace drawn")
    await asyncio.to_thread(
        browser.execute_script,
        "document.getElementById('graph').scrollIntoView({block: 'start'})",
    )
    return await wait_for(browser, lambda b: view(b)["scale"] > 0 and view(b), "the view fitted")


def whole(state: dict[str, Any]) -> None:
    """The view shows the whole graph (no minimap then), and the graph is wider than the
    stage, so showing it whole took a scale below 1."""
    x, y, w, h = state["viewBox"]
    width, height = state["graph"]
    assert x <= 0 and y <= 0 and x + w >= width and y + h >= height, state
    assert width > state["box"]["width"] and state["scale"] < 1, state
    assert abs(state["scale"] - scale_of(state)) < 0.01, state
    assert state["mini"]["frame"] == [0, 0, width, height] and not state["mini"]["shown"], state


async def wheel_to(
    browser: WebDriver, origin: ScrollOrigin, delta: int, bound: float
) -> dict[str, Any]:
    """The view once the wheel, turned by `delta` px, has brought it to scale `bound`."""
    await asyncio.to_thread(act, browser, lambda a: a.scroll_from_origin(origin, 0, delta))
    return await wait_for(
        browser, lambda b: view(b)["scale"] == bound and view(b), f"the scale at {bound}"
    )


async def check_wheel_and_fit(browser: WebDriver, opened: dict[str, Any]) -> None:
    """The wheel zooms in around the pointer, the minimap's frame shrinks; Fit undoes it."""
    svg = await asyncio.to_thread(browser.find_element, By.ID, "graph")
    await asyncio.to_thread(browser.execute_script, WHEEL_SEEN)
    origin = ScrollOrigin.from_element(svg, -150, 40)  # left of the middle: zoomed around it
    await asyncio.to_thread(act, browser, lambda a: a.scroll_from_origin(origin, 0, -300))
    zoomed = await wait_for(
        browser, lambda b: view(b)["scale"] > opened["scale"] and view(b), "a zoom"
    )
    pointer = await asyncio.to_thread(browser.execute_script, "return window.wheelSeen")
    assert near(graph_point(zoomed, *pointer), graph_point(opened, *pointer)), (opened, zoomed)
    width, height = opened["graph"]
    frame = zoomed["mini"]["frame"]
    assert zoomed["mini"]["shown"] and frame[2] < width and frame[3] <= height, zoomed
    x, y, w, h = zoomed["viewBox"]
    seen = (max(x, 0), max(y, 0), min(x + w, width), min(y + h, height))  # the part in view
    assert near(tuple(frame), (seen[0], seen[1], seen[2] - seen[0], seen[3] - seen[1]), 0.05)
    assert zoomed["level"] == f"{round(zoomed['scale'] * 100)}%"
    for delta, bound in ((-5000, 4), (20000, 0.2)):  # as far as the wheel goes, each way
        far = await wheel_to(browser, origin, delta, bound)
        assert far["level"] == f"{round(bound * 100)}%" and abs(scale_of(far) - bound) < 1e-3

    await asyncio.to_thread(press, browser, "zoom-reset")
    reset = await asyncio.to_thread(view, browser)
    assert reset["viewBox"] == opened["viewBox"] and reset["scale"] == opened["scale"], reset
    whole(reset)


async def check_drags(browser: WebDriver) -> dict[str, Any]:
    """Zoomed in twice by the button, a drag on the background pans by what it moved; one
    that starts on a node pans too, and neither opens the node."""
    before = await asyncio.to_thread(view, browser)
    for _ in range(2):
        await asyncio.to_thread(press, browser, "zoom-in")
    zoomed = await asyncio.to_thread(view, browser)
    assert abs(zoomed["scale"] - before["scale"] * 1.25**2) < 0.01, (before, zoomed)
    assert near(centre(zoomed), centre(before)), (before, zoomed)  # zoomed at the middle

    svg = await asyncio.to_thread(browser.find_element, By.ID, "graph")
    start = await asyncio.to_thread(browser.execute_script, BACKGROUND)
    assert start is not None, "no background to drag in the graph"
    await asyncio.to_thread(
        act, browser,
        lambda a: a.move_to_element_with_offset(svg, *start).click_and_hold()
        .move_by_offset(-120, -50).release(),
    )  # fmt: skip
    panned = await asyncio.to_thread(view, browser)
    moved = [p - q for p, q in zip(panned["viewBox"], zoomed["viewBox"], strict=True)]
    scale = scale_of(zoomed)
    assert near(tuple(moved), (120 / scale, 50 / scale, 0, 0), 0.05), (zoomed, panned)
    assert not panned["details"]

    node = await asyncio.to_thread(browser.execute_script, VISIBLE_NODE)
    assert node is not None, "no node in view"
    await asyncio.to_thread(
        act, browser,
        lambda a: a.move_to_element_with_offset(svg, node[1], node[2]).click_and_hold()
        .move_by_offset(90, 30).release(),
    )  # fmt: skip
    dragged = await asyncio.to_thread(view, browser)
    moved = [p - q for p, q in zip(dragged["viewBox"], panned["viewBox"], strict=True)]
    assert near(tuple(moved), (-90 / scale, -30 / scale, 0, 0), 0.05), (panned, dragged)
    await asyncio.sleep(0.3)  # a click, were one to open the node, has come by now
    assert not (await asyncio.to_thread(view, browser))["details"], "a drag opened a node"
    assert await asyncio.to_thread(browser.find_elements, By.CSS_SELECTOR, "#graph .selected") == []
    return dragged


async def check_minimap_and_keys(browser: WebDriver, state: dict[str, Any]) -> None:
    """A click in the minimap centres the view on the point under it; an arrow key pans."""
    assert state["mini"]["shown"]
    mini = state["mini"]["box"]
    width, height = state["graph"]
    target = await asyncio.to_thread(
        browser.find_element, By.CSS_SELECTOR, "#graph-box .minimap svg"
    )
    offset = (round(mini["width"] * 0.3), round(-mini["height"] * 0.2))
    await asyncio.to_thread(
        act, browser, lambda a: a.move_to_element_with_offset(target, *offset).click()
    )
    moved = await asyncio.to_thread(view, browser)
    # the graph point under the click, by where the minimap is and what it shows
    wanted = (
        (mini["width"] / 2 + offset[0]) / mini["width"] * width,
        (mini["height"] / 2 + offset[1]) / mini["height"] * height,
    )
    unit = width / mini["width"]  # graph units in a minimap pixel
    assert near(centre(moved), wanted, 1.5 * unit), (wanted, moved)
    assert moved["scale"] == state["scale"]
    # a drag in it: the view follows to where it is let go
    await asyncio.to_thread(
        act, browser,
        lambda a: a.move_to_element_with_offset(target, *offset).click_and_hold()
        .move_by_offset(-2 * offset[0], -offset[1]).release(),
    )  # fmt: skip
    moved = await asyncio.to_thread(view, browser)
    wanted = ((mini["width"] / 2 - offset[0]) / mini["width"] * width, height / 2)
    assert near(centre(moved), wanted, 1.5 * unit), (wanted, moved)

    await asyncio.to_thread(browser.execute_script, "document.getElementById('graph').focus()")
    await asyncio.to_thread(act, browser, lambda a: a.send_keys(Keys.ARROW_RIGHT, Keys.ARROW_DOWN))
    keyed = await asyncio.to_thread(view, browser)
    moved_by = [p - q for p, q in zip(keyed["viewBox"], moved["viewBox"], strict=True)]
    step = 60 / scale_of(state)
    assert near(tuple(moved_by), (step, step, 0, 0), 0.05), keyed


async def check_search(browser: WebDriver, nodes: list[dict[str, Any]]) -> str:
    """A tool's name, in any case, marks exactly its calls; Enter goes to the next, centred;
    a text of one node's details finds it alone; nothing found says so. Returns the node
    shown at the end."""
    calls = [str(n["id"]) for n in nodes if n["kind"] == "tool_call" and n["name"] == "calculator"]
    assert len(calls) == len(CALCULATIONS)  # as many as the model made
    expected = holding(nodes, "CalcuLATOR")
    assert sorted(expected) == sorted(calls)
    await asyncio.to_thread(search, browser, "CalcuLATOR")
    first = await wait_for(browser, lambda b: view(b)["matched"] and view(b), "the matches")
    assert sorted(first["matched"]) == sorted(expected), first
    assert sorted(first["dimmed"]) == sorted(set(first["nodes"]) - set(expected)), first
    assert sorted(first["mini"]["matched"]) == sorted(expected)
    assert first["count"] == f"1 of {len(expected)}"
    assert first["current"] == first["matched"][0], first
    assert first["scale"] >= 1 and near(centre(first), node_middle(first["at"])), first

    field = await asyncio.to_thread(browser.find_element, By.CSS_SELECTOR, "#graph-box .graph-find")
    await asyncio.to_thread(field.send_keys, Keys.ENTER)
    second = await asyncio.to_thread(view, browser)
    assert second["count"] == f"2 of {len(expected)}" and second["current"] == first["matched"][1]
    assert near(centre(second), node_middle(second["at"])), second
    assert not near(centre(second), centre(first), 10)
    await asyncio.to_thread(screenshot, browser, "admin-trace-search.png")

    (failed,) = holding(nodes, WORD)
    assert next(n for n in nodes if str(n["id"]) == failed)["name"] == "fail_loudly"
    await asyncio.to_thread(search, browser, WORD.upper())
    found = await asyncio.to_thread(view, browser)
    assert (found["matched"], found["current"], found["count"]) == ([failed], failed, "1 of 1")

    await asyncio.to_thread(search, browser, "no such node anywhere")
    nothing = await asyncio.to_thread(view, browser)
    assert holding(nodes, "no such node anywhere") == []
    assert nothing["count"] == "No match" and nothing["matched"] == nothing["dimmed"] == []
    await asyncio.to_thread(search, browser, "calculator")
    again = await asyncio.to_thread(view, browser)
    assert again["count"] == f"1 of {len(expected)}" and again["matched"] == first["matched"]
    return str(again["current"])


async def test_the_trace_zooms_pans_shows_a_minimap_and_finds_nodes(
    stack: Stack, browser: WebDriver
) -> None:
    run, nodes = await scripted_run(stack)
    tools = [n for n in nodes if n["kind"] == "tool_call"]
    assert len(tools) == sum(len(reply.tool_calls) for reply in SCRIPT)
    opened = await open_run(browser, stack, run)
    assert sorted(opened["nodes"]) == sorted(str(n["id"]) for n in nodes)
    whole(opened)
    await asyncio.to_thread(screenshot, browser, "admin-trace-view.png")
    await check_wheel_and_fit(browser, opened)
    dragged = await check_drags(browser)
    await check_minimap_and_keys(browser, dragged)
    shown = await check_search(browser, nodes)

    await asyncio.to_thread(
        lambda: browser.find_element(By.CSS_SELECTOR, f'#graph g.node[data-id="{shown}"]').click()
    )
    details = await wait_for(browser, node_details, "the node's details")
    assert "tool_call: calculator" in details and "expression=" in details, details
    assert await asyncio.to_thread(severe_logs, browser) == []
