"""The lab end to end: three API runs on one model, then an evaluation that replays them on
another, through a real web app and two worker processes, the fake model behind the real
SDK. The rows and the summary are right; the calls that changed things in the recorded run
(a memory, a task) are answered from the record and not made again, one the record does not
have is refused; the deployment's own figures leave the replays out."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from bot.agent.replayed import REFUSED
from bot.store.memory import Memories
from bot.tasks.book import TASKS
from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec
from tests.integration.http.test_agent_run import traced
from tests.support.chat_stores import database_of
from tests.support.stack import Stack
from tests.support.tasks import results
from tests.support.waiting import until

pytestmark = pytest.mark.e2e
CANDIDATE = "claude-candidate"
REMEMBER = ToolCallSpec("remember", {"fact": "Ann likes green tea"})
SCHEDULE = ToolCallSpec(
    "schedule_task", {"prompt": "Remind Ann to buy tea", "when": "in 20 minutes"}
)
OTHER = ToolCallSpec("remember", {"fact": "Ann likes coffee"})


def answer(request: RecordedRequest) -> Reply:
    """Both models: the first run's question makes calls, the others are answered at once;
    the candidate calls once more what the recorded run did not."""
    asked, model = request.last_user_text(), request.body["model"]
    if "tea" in asked and not request.tool_results():
        calls = [REMEMBER, SCHEDULE, *([OTHER] if model == CANDIDATE else [])]
        return Reply(tool_calls=calls)
    if request.tool_results():
        return Reply(text="Saved and scheduled." if model != CANDIDATE else "All set again.")
    return Reply(text="Two." if "two" in asked else f"Three, says {model}.")


async def run(client: httpx.AsyncClient, task: str) -> dict[str, Any]:
    answered = await client.post("/api/agent/run", json={"task": task}, timeout=60)
    assert answered.status_code == 200, answered.text
    return await traced(client, answered.json()["run_id"])


async def evaluated(client: httpx.AsyncClient, evaluation: str) -> dict[str, Any]:
    reports: list[dict[str, Any]] = []

    async def done() -> bool:
        reports.append((await client.get(f"/api/evaluations/{evaluation}")).json())
        return bool(reports[-1]["status"] == "done")

    await until(done, "the evaluation done", within=60)
    return reports[-1]


async def test_an_evaluation_replays_runs_on_a_candidate_without_repeating_effects(
    stack: Stack,
) -> None:
    for _ in range(2):  # the lanes' replays taken by worker processes, as any message is
        await stack.start_worker_process()
    stack.fake.responder = answer
    async with stack.client() as client:
        originals = [
            await run(client, task)
            for task in ("Remember that I like tea, remind me tomorrow", "Say two", "Say three")
        ]
        ids = [trace["run"]["id"] for trace in originals]
        stats_before = (await client.get("/api/stats")).json()
        started = await client.post(
            "/api/evaluations",
            json={"runs": ids, "config": {"model": CANDIDATE}, "label": "candidate"},
        )
        assert started.status_code == 202, started.text
        report = await evaluated(client, started.json()["id"])
        evaluations = (await client.get("/api/evaluations")).json()
        stats_after = (await client.get("/api/stats")).json()
        listed = (await client.get("/api/metrics/runs")).json()
        replays = (await client.get("/api/metrics/runs", params={"trigger": "replay"})).json()
        first = await traced(client, report["rows"][0]["replay"])

    rows = report["rows"]
    assert [row["run"] for row in rows] == ids and report["label"] == "candidate"
    assert all(row["after"]["outcome"] == "completed" for row in rows)
    assert [row["same_answer"] for row in rows] == [False, True, False]
    assert rows[2]["answers"] == {"before": "Three, says claude-test.",
                                  "after": f"Three, says {CANDIDATE}."}  # fmt: skip
    assert report["summary"]["compared"] == 3 and report["summary"]["same_answers"] == 1
    assert report["summary"]["after"]["success_rate"] == 1.0
    assert first["config"]["model"] == CANDIDATE and first["run"]["trigger"] == "replay"
    assert [(e["id"], e["status"]) for e in evaluations["items"]] == [(report["id"], "done")]

    # the memory and the task of the recorded run are answered from the record, not made
    replayed = [r for r in stack.fake.requests if r.body["model"] == CANDIDATE]
    original_said = results(stack.fake.requests[:2], "schedule_task")
    assert results(replayed, "schedule_task") == original_said
    assert results(replayed, "remember")[-1] == REFUSED.format(name="remember")
    # each replay's prompt says where its recorded run was (the API's), not the lab
    assert all("Platform: http;" in str(r.body["system"]) for r in replayed)
    assert not any("Platform: lab" in str(r.body["system"]) for r in replayed)
    async with database_of(stack) as database:
        kept = await Memories(database.engine).all(originals[0]["run"]["sender"])
        async with database.engine.connect() as connection:
            tasks = (await connection.execute(TASKS.select())).all()
    assert [memory.text for memory in kept] == ["Ann likes green tea"]
    assert len(tasks) == 1, original_said

    # the deployment's own figures leave the replays out
    assert [item["id"] for item in listed["items"]] == list(reversed(ids))
    assert sorted(item["id"] for item in replays["items"]) == sorted(r["replay"] for r in rows)
    for figure in ("sessions", "messages", "runs", "failed_runs", "usage", "by_platform"):
        assert stats_after[figure] == stats_before[figure], figure


async def test_bad_evaluations_are_refused_before_anything_is_queued(stack: Stack) -> None:
    async with stack.client() as client:
        both = await client.post(
            "/api/evaluations", json={"runs": ["a" * 32], "filter": {"limit": 3}}
        )
        neither = await client.post("/api/evaluations", json={"config": {}})
        bad_id = await client.post("/api/evaluations", json={"runs": ["nope"]})
        bad_model = await client.post(
            "/api/evaluations", json={"runs": ["a" * 32], "config": {"model": "gpt-unknown"}}
        )
        empty = await client.post("/api/evaluations", json={"filter": {"limit": 3}})
        unknown = await client.get(f"/api/evaluations/{'b' * 32}")
        malformed = await client.get("/api/evaluations/xyz")
    assert [r.status_code for r in (both, neither, bad_id, bad_model, empty)] == [422] * 5
    assert "runs" in both.text and "32 hexadecimal" in bad_id.text
    assert "no recorded run matches" in empty.text
    assert (unknown.status_code, malformed.status_code) == (404, 400)
