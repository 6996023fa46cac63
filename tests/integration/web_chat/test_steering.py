"""Steering in the web chat, in a real headless Chromium with the default settings: a message
sent while the answer to the one before is under way joins it; the page marks it as taken in,
shows no answer of its own for it, and the one answer goes on below it."""

from __future__ import annotations

import asyncio

from selenium.webdriver.remote.webdriver import WebDriver

from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.browser import severe_logs, wait_for
from tests.support.chat_page import idle, run, say, script
from tests.support.stack import Stack
from tests.support.waiting import until

LOG = """return [...document.querySelectorAll('#log > *')].map((e) => ({
  cls: e.className, text: e.textContent,
  joined: e.querySelector('.joined-note')?.textContent || null}));"""


async def test_a_message_sent_meanwhile_joins_the_answer(stack: Stack, browser: WebDriver) -> None:
    await stack.start_worker()
    gate = asyncio.Event()
    tool = ToolCallSpec("calculator", {"expression": "6*7"})
    stack.fake.enqueue(Reply(tool_calls=[tool], gate=gate), Reply(text="The other one is 42."))
    await run(browser, browser.get, stack.base_url + "/")
    await say(browser, "compute the first one")
    await until(lambda: len(stack.fake.requests) == 1, "the first model call")
    await say(browser, "no, the other one")
    await asyncio.sleep(0.5)  # its message posted, queued behind the running turn
    gate.set()
    await wait_for(browser, idle, "both streams ended")
    log = await run(browser, script, browser, LOG)

    users = [i for i, item in enumerate(log) if "user" in item["cls"]]
    assert len(users) == 2 and log[users[1]]["joined"] == "↪ taken into the answer in progress"
    answers = [i for i, item in enumerate(log) if "The other one is 42." in item["text"]]
    assert len(answers) == 1 and answers[0] > users[1]  # one answer, below the joined message
    assert all(item["text"] for item in log)  # no empty turn left for the joined message
    assert len(stack.fake.requests) == 2
    assert await run(browser, severe_logs, browser) == []
