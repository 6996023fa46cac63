"""The lab in a real headless Chromium, over runs two real worker processes made with the fake
model: on the runs page, filtered to the runs that succeeded, "Evaluate these runs…" opens a
form that shows the API's refusal of a model the deployment does not serve, then starts an
evaluation of exactly the filtered runs on a candidate model; the lab page opens it, follows
it until it is done, and shows each recorded run beside its replay as the API reports them
(outcome, score, latency, tokens and cost with the change coloured by which side did better,
the same-answer mark, both answers as text, never as markup) and the summary with its
changes; a click on a row draws the two traces side by side. Another evaluation, started from
a link to the four runs filtered the same way (so it replays those three, by id), its
replays held at the model, is cancelled from the page: the replay not begun is skipped, its
row says why, and the page follows without a click."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from tests.fakes.llm import Fail, RecordedRequest, Reply
from tests.integration.dashboard.test_page import click, rows
from tests.integration.http.test_agent_run import traced
from tests.support.browser import screenshot, severe_logs, wait_for
from tests.support.stack import Stack

CANDIDATE, HELD = "claude-candidate", "claude-held"
LONG = "Three, says the candidate: <b>not bold</b>. " + "And a good deal more to say. " * 20
TASKS = ("Say two", "Say three", "Say four", "Say five")
LABEL = "candidate <i>one</i>"
ROWS = """return [...document.querySelectorAll('#compare-rows tr')].map((tr) => ({
  run: tr.dataset.run,
  outcome: [...tr.cells[1].querySelectorAll('.badge')].map((b) => b.textContent),
  outcome_delta: tr.cells[1].dataset.delta || null,
  figures: [2, 3, 4, 5].map((n) => ({
    was: tr.cells[n].querySelector('.was').textContent,
    now: tr.cells[n].querySelector('.now').textContent,
    delta: tr.cells[n].querySelector('.delta').textContent,
    verdict: tr.cells[n].dataset.delta})),
  same: tr.cells[6].textContent,
  answers: [tr.cells[7].textContent, tr.cells[8].textContent],
  markup: tr.querySelectorAll('b, i').length}));"""
SUMMARY = """return Object.fromEntries(
  [...document.querySelectorAll('#summary-rows tr')].map((tr) => [tr.dataset.figure,
    [...tr.cells].slice(1).map((c) => c.textContent).concat(tr.cells[3].dataset.delta)]));"""
FIGURES = (("score", True), ("latency_ms", False), ("tokens", False), ("cost", False))


def brain(gate: asyncio.Event) -> Callable[[RecordedRequest], Reply | Fail]:
    """The recorded runs' model answers each at once, but fails "five"; the candidate fails
    "four" and says more for "three"; the held model waits for `gate`."""

    def answer(request: RecordedRequest) -> Reply | Fail:
        asked, model = request.last_user_text(), request.body["model"]
        if model == HELD:
            return Reply(text="Held, then said.", gate=gate, gate_after=1)
        if "five" in asked and model != CANDIDATE:
            return Fail(400, "invalid_request_error", "this request is refused")
        if "four" in asked and model == CANDIDATE:
            return Fail(400, "invalid_request_error", "the candidate refuses")
        if "three" in asked:
            return Reply(text=LONG if model == CANDIDATE else "Three.")
        return Reply(text=asked.split()[-1].capitalize() + ".")

    return answer


async def recorded_runs(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    """The four runs' traces, in the order they ran: three succeeded, "five" failed."""
    traces = []
    for task in TASKS:
        answered = await client.post("/api/agent/run", json={"task": task}, timeout=60)
        assert answered.status_code == 200, answered.text
        traces.append(await traced(client, answered.json()["run_id"]))
    assert [t["run"]["status"] for t in traces] == ["completed"] * 3 + ["failed"]
    return traces


def fill(browser: WebDriver, field: str, text: str) -> None:
    element = browser.find_element(By.ID, field)
    element.clear()
    element.send_keys(text)


def form_problems(browser: WebDriver) -> list[str] | None:
    items = browser.find_elements(By.CSS_SELECTOR, "#e-problems li")
    return [str(item.text) for item in items] or None


def shown(browser: WebDriver, evaluation: str, status: str) -> bool:
    said = browser.execute_script("return document.body.dataset.evaluation || ''")
    return bool(said == f"{evaluation} {status}")


def listed_as(browser: WebDriver, evaluation: str) -> str:
    """The text of the evaluation's row in the list."""
    return str(
        browser.find_element(By.CSS_SELECTOR, f'#evaluations tr[data-id="{evaluation}"]').text
    )


def lab_id(browser: WebDriver) -> str | None:
    url = str(browser.current_url)
    return url.split("evaluation=", 1)[1][:32] if "/admin/lab?evaluation=" in url else None


def sign(delta: float) -> str:
    return "=" if delta == 0 else ("+" if delta > 0 else "\u2212")


def verdict(before: Any, after: Any, up: bool) -> str:
    if before is None or after is None:
        return "none"
    if after == before:
        return "same"
    return "better" if (after > before) == up else "worse"


async def start_from_the_runs_page(stack: Stack, browser: WebDriver) -> str:
    """Filtered to the runs that succeeded, the form refuses a model the deployment does not
    serve (the API's problem shown) and starts one on the candidate: the lab opens it."""
    await asyncio.to_thread(browser.get, stack.base_url + "/admin?outcome=ok")
    await wait_for(browser, lambda b: len(rows(b)) == 3, "the three runs that succeeded")
    await asyncio.to_thread(click, browser, "#evaluate-open")
    scope = await wait_for(browser, lambda b: b.find_element(By.ID, "e-scope").text, "the form")
    assert "matching outcome ok" in scope and "3 of them" in scope
    await asyncio.to_thread(fill, browser, "e-model", "gpt-unknown")
    await asyncio.to_thread(fill, browser, "e-label", LABEL)
    await asyncio.to_thread(fill, browser, "e-limit", "10")
    await asyncio.to_thread(click, browser, "#e-start")
    problems = await wait_for(browser, form_problems, "the API's problems in the form")
    assert problems == ["config.model: this deployment's API does not serve 'gpt-unknown'"]
    assert await asyncio.to_thread(lambda: browser.find_element(By.ID, "e-error").text) == (
        "invalid request"
    )
    await asyncio.to_thread(screenshot, browser, "lab-form-refused.png")
    await asyncio.to_thread(fill, browser, "e-model", CANDIDATE)
    await asyncio.to_thread(click, browser, "#e-start")
    return str(await wait_for(browser, lab_id, "the lab page opened on the new evaluation"))


def check_rows(shown_rows: list[dict[str, Any]], report: dict[str, Any]) -> None:
    assert [row["run"] for row in shown_rows] == [row["run"] for row in report["rows"]]
    for row, wanted in zip(shown_rows, report["rows"], strict=True):
        before, after = wanted["before"], wanted["after"]
        assert row["outcome"] == [before["outcome"], after["outcome"]]
        assert row["outcome_delta"] == verdict(
            before["outcome"] == "completed", after["outcome"] == "completed", True
        )
        for figure, (name, up) in zip(row["figures"], FIGURES, strict=True):
            assert figure["verdict"] == verdict(before[name], after[name], up), (name, row)
            if name in ("score", "tokens"):
                assert (figure["was"], figure["now"]) == (str(before[name]), str(after[name]))
                change = after[name] - before[name]
                assert figure["delta"] == ("=" if not change else f"{sign(change)}{abs(change)}")
        marks = {True: "same answer", False: "another answer", None: "–"}
        assert row["same"] == marks[wanted["same_answer"]]
        assert row["answers"] == [wanted["answers"]["before"], wanted["answers"]["after"] or "–"]
        assert row["markup"] == 0


def check_summary(summary: dict[str, list[str]], report: dict[str, Any]) -> None:
    before, after = report["summary"]["before"], report["summary"]["after"]
    assert (before["success_rate"], after["success_rate"]) == (1.0, 2 / 3)
    assert summary["success_rate"] == ["100%", "66.7%", "\u221233.3 pt", "worse"]
    tokens = after["tokens"] - before["tokens"]
    assert summary["tokens"][:3] == [
        str(before["tokens"]),
        str(after["tokens"]),
        f"{sign(tokens)}{abs(tokens)}",
    ]
    assert summary["tokens"][3] == verdict(before["tokens"], after["tokens"], False)
    assert summary["median_score"][3] == verdict(
        before["median_score"], after["median_score"], True
    )


async def check_evaluation(
    stack: Stack, browser: WebDriver, evaluation: str, ok: list[str]
) -> None:
    await wait_for(browser, lambda b: shown(b, evaluation, "done"), "the evaluation done", 90)
    async with stack.client() as client:
        report = (await client.get(f"/api/evaluations/{evaluation}")).json()
    assert [row["run"] for row in report["rows"]] == list(reversed(ok))  # newest first
    shown_rows = await asyncio.to_thread(browser.execute_script, ROWS)
    check_rows(shown_rows, report)
    three = next(row for row in shown_rows if row["answers"][1] == LONG)
    assert [f["verdict"] for f in three["figures"]][2] == "worse"  # more tokens
    four = next(row for row in shown_rows if row["outcome"] == ["completed", "failed"])
    assert four["outcome_delta"] == "worse" and four["figures"][0]["verdict"] == "worse"
    assert next(r for r in shown_rows if r["answers"][0] == "Two.")["same"] == "same answer"
    check_summary(await asyncio.to_thread(browser.execute_script, SUMMARY), report)
    title = await asyncio.to_thread(lambda: browser.find_element(By.ID, "evaluation-title").text)
    assert title == LABEL  # the label as text
    listed = await asyncio.to_thread(listed_as, browser, evaluation)
    assert LABEL in listed and "done" in listed and f"model {CANDIDATE}" in listed
    await asyncio.to_thread(screenshot, browser, "lab-evaluation.png")


def side_meta(browser: WebDriver, side: str) -> str:
    """The head of one side of the two traces: its model, outcome, numbers and run."""
    return str(browser.find_element(By.CSS_SELECTOR, f"#pair-{side} .side-meta").text)


async def check_pair(stack: Stack, browser: WebDriver, evaluation: str) -> None:
    """A click on a row: both traces drawn, each with as many nodes as its trace has."""
    async with stack.client() as client:
        row = (await client.get(f"/api/evaluations/{evaluation}")).json()["rows"][0]
        nodes = [len((await traced(client, run))["nodes"]) for run in (row["run"], row["replay"])]
    await asyncio.to_thread(click, browser, f'#compare-rows tr[data-run="{row["run"]}"]')
    await wait_for(
        browser,
        lambda b: b.execute_script("return document.body.dataset.pair") == row["run"],
        "the two traces drawn",
    )
    for side, count, run in zip(
        ("before", "after"), nodes, (row["run"], row["replay"]), strict=True
    ):
        drawn = await asyncio.to_thread(
            browser.find_elements, By.CSS_SELECTOR, f"#graph-{side} g.node"
        )
        assert len(drawn) == count > 0, side
        assert f"run {run}" in await asyncio.to_thread(side_meta, browser, side)
    after_meta = await asyncio.to_thread(side_meta, browser, "after")
    assert CANDIDATE in after_meta and "replay" in after_meta
    node = await asyncio.to_thread(browser.find_element, By.CSS_SELECTOR, "#graph-after g.node")
    await asyncio.to_thread(node.click)
    detail = await wait_for(
        browser,
        lambda b: b.find_element(By.CSS_SELECTOR, "#pair-after .side-node").text,
        "a node's details under the replay's graph",
    )
    shown_node = await asyncio.to_thread(
        lambda: browser.find_element(By.CSS_SELECTOR, "#pair-after .side-node")
    )
    assert await asyncio.to_thread(shown_node.get_attribute, "data-id") == (
        await asyncio.to_thread(node.get_attribute, "data-id")
    )
    assert detail.startswith("model_call: "), detail
    assert f"row={row['run']}" in str(browser.current_url)
    await asyncio.to_thread(screenshot, browser, "lab-pair.png")


REPLAYED = (
    "return [...document.querySelectorAll('#compare-rows tr')].map((r) => r.cells[8].textContent)"
)


def replayed(browser: WebDriver) -> list[str]:
    """The replayed answers' cells."""
    return [str(text) for text in browser.execute_script(REPLAYED)]


def held_calls(stack: Stack) -> int:
    return len([r for r in stack.fake.requests if r.body["model"] == HELD])


async def start_held(stack: Stack, browser: WebDriver, ids: list[str]) -> str:
    """From a link to the four runs, filtered to those that succeeded: the form replays those
    three, by id, on the held model."""
    link = f"{stack.base_url}/admin?runs={','.join(ids)}&outcome=ok"
    await asyncio.to_thread(browser.get, link)
    await wait_for(browser, lambda b: len(rows(b)) == 3, "the three of them that succeeded")
    await asyncio.to_thread(click, browser, "#evaluate-open")
    scope = await wait_for(browser, lambda b: b.find_element(By.ID, "e-scope").text, "the form")
    assert "Those of the 4 runs this link names matching outcome ok (3 of them)" in scope
    await asyncio.to_thread(fill, browser, "e-model", HELD)
    await asyncio.to_thread(click, browser, "#e-start")
    return str(await wait_for(browser, lab_id, "the lab page opened on the held evaluation"))


async def check_cancel(
    stack: Stack, browser: WebDriver, ids: list[str], gate: asyncio.Event
) -> None:
    """Three replays held at the model, two lanes: cancelled from the page, the one not
    begun is skipped; the page follows without a click, the two begun end once let go."""
    held = await start_held(stack, browser, ids)
    await wait_for(browser, lambda b: shown(b, held, "running"), "the held evaluation running")
    async with stack.client() as client:
        report = (await client.get(f"/api/evaluations/{held}")).json()
    assert [row["run"] for row in report["rows"]] == list(reversed(ids[:3]))
    await wait_for(browser, lambda b: held_calls(stack) >= 2, "two replays at the model")
    await asyncio.to_thread(click, browser, "#cancel")
    await wait_for(browser, lambda b: shown(b, held, "cancelled"), "the evaluation cancelled")
    assert not await asyncio.to_thread(lambda: browser.find_element(By.ID, "cancel").is_displayed())
    gate.set()
    skipped = "skipped: the evaluation was cancelled"
    ended = {skipped: 1, "Held, then said.": 2}
    await wait_for(
        browser,
        lambda b: {t: replayed(b).count(t) for t in ended} == ended,
        "one replay skipped and two answered, without a click",
    )
    assert len(await asyncio.to_thread(replayed, browser)) == 3
    assert held_calls(stack) == 2  # the skipped one never reached the model
    assert "cancelled" in await asyncio.to_thread(listed_as, browser, held)


async def test_an_evaluation_started_from_the_runs_list_is_shown_side_by_side(
    stack: Stack, browser: WebDriver
) -> None:
    gate = asyncio.Event()
    for _ in range(2):  # the lanes' replays taken by worker processes
        await stack.start_worker_process()
    stack.fake.responder = brain(gate)
    async with stack.client() as client:
        traces = await recorded_runs(client)
    ids = [trace["run"]["id"] for trace in traces]
    await asyncio.to_thread(browser.set_window_size, 1400, 1000)
    evaluation = await start_from_the_runs_page(stack, browser)
    await check_evaluation(stack, browser, evaluation, ids[:3])
    await check_pair(stack, browser, evaluation)
    await check_cancel(stack, browser, ids, gate)
    logged = [
        e
        for e in await asyncio.to_thread(severe_logs, browser)
        if "/api/evaluations - Failed to load resource" not in e["message"]
        or "status of 422" not in e["message"]
    ]
    assert logged == [], logged  # the refused start is logged as such; nothing else failed
