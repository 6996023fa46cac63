"""The web chat's cards: tool calls (arguments and result folded, failures marked, how long
they took) and the plan of a `plan_execute` run, a checklist updated as its steps go."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from bot.redis import keys
from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.browser import wait_for, wait_for_text
from tests.support.chat_page import current_session, idle, run, say, script, tool_cards
from tests.support.stack import Stack
from tests.support.waiting import until

TOOK = re.compile(r"in (<1 ms|\d+ ms|\d+\.\d\d s)")


async def test_tool_calls_are_shown_as_cards(stack: Stack, browser: WebDriver) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(
            tool_calls=[
                ToolCallSpec("calculator", {"expression": "6*7"}),
                ToolCallSpec("fail_loudly", {"detail": "on purpose"}),
            ]
        ),
        Reply(text="One worked, one did not."),
    )
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "try both")
    await wait_for_text(browser, "One worked, one did not.")
    worked, broke = await run(browser, tool_cards, browser)

    assert worked["name"] == "calculator" and worked["args"] == {"expression": "6*7"}
    assert worked["result"] == "42" and worked["label"] == "Result" and not worked["failed"]
    assert worked["status"].startswith("done ") and TOOK.search(worked["status"])
    assert broke["name"] == "fail_loudly" and broke["args"] == {"detail": "on purpose"}
    assert broke["failed"] and broke["label"] == "Error" and broke["result"]
    assert broke["status"].startswith("failed")
    assert broke["result"] == stack.fake.requests[1].tool_results()[1][1]
    # Arguments and results are folded: the call's name shows, its details on demand.
    assert worked["open"] == broke["open"] == [False, False]
    assert "6*7" not in worked["visible"] and "42" not in worked["visible"]

    summary = await run(browser, browser.find_element, By.CSS_SELECTOR, ".tool .tool-args summary")
    await run(browser, summary.click)
    expanded = (await run(browser, tool_cards, browser))[0]
    assert expanded["open"] == [True, False] and '"expression": "6*7"' in expanded["visible"]


@pytest.fixture
async def redis(stack: Stack) -> AsyncIterator[Redis]:
    client = Redis.from_url(stack.redis_url)
    yield client
    await client.aclose()


def plan(revision: int, *steps: tuple[str, str, str]) -> dict[str, Any]:
    """A `plan` event as the worker writes it: (title, status, result) per step."""
    return {
        "type": "plan",
        "revision": revision,
        "steps": [
            {"id": n, "title": title, "depends_on": [n - 1] if n > 1 else [], "status": status,
             "result": result}
            for n, (title, status, result) in enumerate(steps, start=1)
        ],
    }  # fmt: skip


def checklist(browser: WebDriver) -> dict[str, Any] | None:
    """The plan card of the newest turn, and where it stands in the turn."""
    return script(  # type: ignore[no-any-return]
        browser,
        """const card = [...document.querySelectorAll('#log .turn .plan')].pop();
        if (!card) return null;
        return {
          first: card.parentElement.firstElementChild === card,
          cards: card.parentElement.querySelectorAll('.plan').length,
          count: card.querySelector('.plan-count').textContent,
          steps: [...card.querySelectorAll('.step')].map(s => [
            s.querySelector('.step-title').textContent, s.dataset.status,
            s.querySelector('.step-result')?.textContent ?? '', s.title]),
        };""",
    )


def showing(count: str) -> Any:
    def probe(browser: WebDriver) -> dict[str, Any] | None:
        found = checklist(browser)
        return found if found and found["count"] == count else None

    return probe


async def test_the_plan_is_a_checklist_updated_live(
    stack: Stack, browser: WebDriver, redis: Redis
) -> None:
    """`plan` events are written into the session's event stream, as the worker writes its
    events, while a turn is streaming: each one replaces the checklist shown above the reply."""
    await stack.start_worker()
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(text="The answer, after the plan.", chunk_size=4, gate=gate, gate_after=4)
    )
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "plan it")
    await wait_for(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".msg.bot"), "the reply")
    session = await run(browser, current_session, browser)
    stream = keys.events(f"http:{session}")
    [(_, fields)] = await redis.xrevrange(stream, count=1)
    envelopes = fields[b"envelopes"]  # the turn's, so the page's stream of the turn carries it

    async def send(event: dict[str, Any]) -> None:
        await redis.xadd(stream, {"envelopes": envelopes, "event": json.dumps(event)})

    await send(plan(0, ("Find sources", "running", ""), ("Summarise", "pending", "")))
    shown = await wait_for(browser, showing("0/2 done"), "the plan")
    assert shown["first"] and shown["cards"] == 1  # above the reply that began before it
    assert [s[:3] for s in shown["steps"]] == [
        ["Find sources", "running", ""],
        ["Summarise", "pending", ""],
    ]
    assert "after step 1" in shown["steps"][1][3]

    await send(plan(0, ("Find sources", "done", "3 sources"), ("Summarise", "running", "")))
    shown = await wait_for(browser, showing("1/2 done"), "the first step done")
    assert shown["steps"][0][1:3] == ["done", "3 sources"] and "3 sources" in shown["steps"][0][3]
    assert shown["steps"][1][1] == "running"

    revised = plan(
        1,
        ("Find sources", "done", "3 sources"),
        ("Summarise", "failed", "too long"),
        ("Summarise in parts", "done", "2 parts"),
        ("Cite them", "skipped", ""),
    )
    await send(revised)
    shown = await wait_for(browser, showing("2/4 done · revised 1×"), "the revised plan")
    assert [s[1] for s in shown["steps"]] == ["done", "failed", "done", "skipped"]
    assert shown["cards"] == 1

    gate.set()
    await wait_for_text(browser, "The answer, after the plan.")
    await wait_for(browser, idle, "the end of the turn")
    final = await run(browser, checklist, browser)
    assert final is not None and final["first"] and final["count"] == "2/4 done · revised 1×"


async def test_a_plan_execute_turn_shows_its_plan_above_the_answer(
    stack: Stack, browser: WebDriver
) -> None:
    """A real plan_execute turn (the session's mode, set with the page's "Plan first"), end
    to end; a reload shows the mode the session is in."""
    await stack.start_worker()
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(text="Hello."),
        Reply(text=json.dumps({"steps": [
            {"id": 1, "title": "Find the number", "depends_on": []},
            {"id": 2, "title": "Double it", "depends_on": [1]},
        ]})),
        Reply(text="The number is 42."),
        Reply(text="Doubled, 84.", gate=gate),
        Reply(text="It is 84.", chunk_size=2, delay=0.02),
    )  # fmt: skip
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "hello")
    await wait_for_text(browser, "Hello.")
    session = await run(browser, current_session, browser)
    await run(browser, browser.find_element(By.ID, "plan-first").click)  # "Plan first"
    async with stack.client() as client:

        async def planning() -> bool:
            detail = (await client.get(f"/api/sessions/{session}")).json()
            return bool(detail["mode"] == "plan_execute")

        await until(planning, "the session in plan mode")

    await say(browser, "what is twice the number?")
    shown = await wait_for(browser, showing("1/2 done"), "the first step done")
    assert [s[:2] for s in shown["steps"]] == [
        ["Find the number", "done"],
        ["Double it", "running"],
    ]
    assert "The number is 42." in shown["steps"][0][2]
    gate.set()
    await wait_for_text(browser, "It is 84.")
    await wait_for(browser, idle, "the end of the turn")
    final = await run(browser, checklist, browser)
    assert final is not None and final["first"] and final["count"] == "2/2 done"
    replies = await run(browser, browser.find_elements, By.CSS_SELECTOR, ".turn .msg.bot")
    assert [r.text for r in replies][-1] == "It is 84."
    await run(browser, browser.execute_script, "localStorage.removeItem('parley.planFirst')")
    await run(browser, browser.refresh)
    await wait_for_text(browser, "It is 84.")
    checked = await run(browser, browser.find_element(By.ID, "plan-first").is_selected)
    assert checked  # read from the session, not from what this browser last chose
