"""The web chat's settings form (⚙ Settings): a model, tools and an output schema chosen for
the open conversation, before its first message (sent when it is made) or later (sent at
once); its turns are offered only those tools and checked against the schema, the form opens
again with what was saved after a reload, and a schema the server refuses is explained in the
form, in the server's words, with nothing kept. A real Chromium, web app, worker and Redis; the
fake model."""

from __future__ import annotations

import json
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.select import Select

from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.browser import screenshot, severe_logs, wait_for, wait_for_text
from tests.support.chat_page import current_session, idle, run, say, script
from tests.support.stack import Stack, recorded

SCHEMA = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "integer"}}}
MODELS = {"PARLEY_MODELS": "claude-test, claude-haiku-test"}


def form(browser: WebDriver) -> dict[str, Any]:
    """The settings form as the page shows it."""
    return script(  # type: ignore[no-any-return]
        browser,
        """const $ = (id) => document.getElementById(id);
        return {
          open: $('settings').open,
          model: $('settings-model').value,
          models: [...$('settings-model').options].map(o => o.value),
          mode: $('settings-mode').value,
          tools: [...$('settings-tools').querySelectorAll('input')].map(b => [b.value, b.checked]),
          schema: $('settings-schema').value,
          problem: $('settings-problem').hidden ? null : $('settings-problem').textContent,
        };""",
    )


def ticked(state: dict[str, Any]) -> list[str]:
    return [name for name, on in state["tools"] if on]


async def opened(browser: WebDriver) -> dict[str, Any]:
    """The form, once ⚙ Settings opened it filled with the deployment's tools."""
    await run(browser, browser.find_element(By.ID, "settings-open").click)

    def filled(b: WebDriver) -> dict[str, Any] | None:
        state = form(b)
        return state if state["open"] and state["tools"] else None

    return await wait_for(browser, filled, "the settings form open")


def choose(browser: WebDriver, tools: list[str], schema: str, model: str | None = None) -> None:
    """Tick only `tools`, type `schema`, pick `model` (as a person does), and save."""
    if model is not None:
        Select(browser.find_element(By.ID, "settings-model")).select_by_value(model)
    browser.find_element(By.ID, "settings-none").click()
    for name in tools:
        browser.find_element(By.CSS_SELECTOR, f'#settings-tools input[value="{name}"]').click()
    box = browser.find_element(By.ID, "settings-schema")
    box.clear()
    box.send_keys(schema)
    browser.find_element(By.ID, "settings-save").click()


def closed(browser: WebDriver) -> bool:
    return not form(browser)["open"]


def said(browser: WebDriver) -> dict[str, list[str]]:
    """The person's messages and the bot's answers in the conversation shown."""
    return script(  # type: ignore[no-any-return]
        browser,
        """const all = (css) => [...document.querySelectorAll(css)].map(e => e.textContent.trim());
        return {users: all('#log .msg.user'), bots: all('#log .msg.bot')};""",
    )


def offered(stack: Stack, call: int) -> list[str]:
    return [tool["name"] for tool in stack.fake.requests[call].body.get("tools", [])]


@pytest.mark.parametrize("stack", [MODELS], indirect=True)
async def test_settings_chosen_before_the_first_message_run_its_turns(
    stack: Stack, browser: WebDriver
) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text='{"answer": "forty-two"}'),  # not the schema's: taken back, asked again
        Reply(text='{"answer": 42}'),
    )
    await run(browser, browser.get, stack.base_url + "/")
    fresh = await opened(browser)
    assert (fresh["model"], fresh["models"]) == ("", ["", "claude-haiku-test"])
    assert fresh["mode"] == "react" and fresh["schema"] == "" and fresh["problem"] is None
    assert len(ticked(fresh)) == len(fresh["tools"]) > 2  # no choice: every tool
    await run(browser, choose, browser, ["calculator"], json.dumps(SCHEMA), "claude-haiku-test")
    await wait_for(browser, closed, "the form closed")

    await say(browser, "6*7 as JSON")
    await wait_for_text(browser, '{"answer": 42}', selector=".msg.bot")
    await wait_for(browser, idle, "the end of the turn")
    live = await run(browser, said, browser)
    assert live == {"users": ["6*7 as JSON"], "bots": ['{"answer": 42}']}
    assert offered(stack, 0) == offered(stack, 1) == offered(stack, 2) == ["calculator"]
    assert [r.body["model"] for r in stack.fake.requests] == ["claude-haiku-test"] * 3
    assert "matching this JSON Schema" in json.dumps(stack.fake.requests[0].body["messages"])
    assert "does not match" in stack.fake.requests[2].last_user_text()  # checked, asked again
    session = await run(browser, current_session, browser)
    assert session is not None
    detail = await recorded(stack, session, 6)
    assert (detail["tools"], detail["output_schema"]) == (["calculator"], SCHEMA)

    await run(browser, browser.refresh)
    await wait_for_text(browser, '{"answer": 42}', selector=".msg.bot")
    assert await run(browser, said, browser) == live  # neither request is the person's
    again = await opened(browser)
    assert ticked(again) == ["calculator"] and json.loads(again["schema"]) == SCHEMA
    assert (again["model"], again["mode"]) == ("claude-haiku-test", "react")
    await run(browser, screenshot, browser, "chat-settings.png")
    assert await run(browser, severe_logs, browser) == []


async def test_a_schema_the_server_refuses_is_explained_in_the_form(
    stack: Stack, browser: WebDriver
) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="Hi."), Reply(text='{"answer": 7}'))
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "hello")
    await wait_for_text(browser, "Hi.")
    await wait_for(browser, idle, "the end of the turn")
    session = await run(browser, current_session, browser)
    assert session is not None
    await opened(browser)

    def saying(words: str) -> Any:
        def probe(b: WebDriver) -> dict[str, Any] | None:
            state = form(b)
            return state if words in (state["problem"] or "") else None

        return probe

    await run(browser, choose, browser, ["current_time"], "{oops")
    state = await wait_for(browser, saying("not valid JSON"), "the form saying it is not JSON")
    assert state["open"] and state["schema"] == "{oops"
    await run(browser, choose, browser, ["current_time"], '{"type": 5}')
    state = await wait_for(browser, saying("not a valid JSON Schema"), "the server's reason")
    assert state["open"] and state["problem"].startswith(
        "output_schema: Value error, not a valid JSON Schema: "
    )
    kept = await recorded(stack, session, 2)
    assert (kept["tools"], kept["output_schema"]) == (None, None)  # nothing was kept

    await run(browser, choose, browser, ["current_time"], json.dumps(SCHEMA))
    await wait_for(browser, closed, "the form closed")
    await say(browser, "seven, as JSON")
    await wait_for_text(browser, '{"answer": 7}', selector=".msg.bot")
    await wait_for(browser, idle, "the end of the turn")
    assert offered(stack, 1) == ["current_time"] and len(offered(stack, 0)) > 2
    detail = await recorded(stack, session, 4)
    assert (detail["tools"], detail["output_schema"]) == (["current_time"], SCHEMA)
    refused = [e for e in await run(browser, severe_logs, browser) if "422" not in e["message"]]
    assert refused == []  # the refused PATCH is the browser's only complaint
