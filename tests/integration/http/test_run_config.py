"""Each run keeps what it ran with: API runs with and without a config, through a real web
app and worker, the fake model behind the real SDK. `GET /api/traces/{id}` shows the whole
configuration, the settings filled in; the runs list filters by mode, prompt and tool set;
a person's standing instruction makes another prompt; a bad hash is a 400."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.fakes.llm import Reply
from tests.integration.http.test_agent_run import traced
from tests.support.stack import Stack

CHOSEN = {
    "mode": "react", "tools": ["calculator", "current_time"], "temperature": 0.3, "top_p": 0.9,
    "timeout": 60, "token_budget": 5000, "max_steps": 4, "reasoning": "off",
    "retry": {"attempts": 2},
}  # fmt: skip


async def run(client: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    answer = await client.post("/api/agent/run", json={"task": "Hello?", **body}, timeout=60)
    assert answer.status_code == 200, answer.text
    return await traced(client, answer.json()["run_id"])


async def listed(client: httpx.AsyncClient, **params: str) -> list[str]:
    window = {
        "start": (datetime.now(UTC) - timedelta(hours=1)).isoformat(timespec="seconds"),
        "end": (datetime.now(UTC) + timedelta(hours=1)).isoformat(timespec="seconds"),
    }
    answer = await client.get("/api/metrics/runs", params={**window, **params})
    assert answer.status_code == 200, answer.text
    return [item["id"] for item in answer.json()["items"]]


async def test_a_run_keeps_what_it_ran_with_and_runs_are_filtered_by_it(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.responder = lambda request: Reply(text="Hi.")
    async with stack.client() as client:
        chosen = await run(client, config=CHOSEN)
        default = await run(client)
        person = chosen["run"]["sender"]
        patched = await client.patch(
            f"/api/people/{person}/preferences", json={"instruction": "Answer in haiku."}
        )
        assert patched.status_code == 200, patched.text
        instructed = await run(client)
        by_tools = await listed(client, tools=chosen["config"]["tools_hash"])
        by_prompt = await listed(client, prompt=default["config"]["prompt"]["hash"])
        by_mode = await listed(client, mode="plan_execute")
        bad = await client.get("/api/metrics/runs", params={"prompt": "XYZ"})
        facets = (await client.get("/api/metrics/facets")).json()

    ran = chosen["config"]
    assert ran["model"] == "claude-test" and ran["mode"] == "react"
    assert ran["tools"] == ["calculator", "current_time"]
    assert (ran["temperature"], ran["top_p"], ran["timeout"]) == (0.3, 0.9, 60)
    assert (ran["token_budget"], ran["max_steps"], ran["reasoning"]) == (5000, 4, "off")
    assert ran["retry_attempts"] == 2 and ran["output_schema"] is None
    assert (chosen["run"]["mode"], chosen["run"]["tools_hash"]) == ("react", ran["tools_hash"])

    filled = default["config"]  # the deployment's settings where the run chose none
    assert len(filled["tools"]) > 2 and "calculator" in filled["tools"]
    assert filled["tools_hash"] != ran["tools_hash"]
    assert filled["timeout"] > 0 and filled["max_steps"] > 0 and filled["retry_attempts"] >= 1
    assert filled["prompt"] == ran["prompt"]  # the same persona, skills and instructions

    moved = instructed["config"]["prompt"]
    assert moved["instructions"] != filled["prompt"]["instructions"]
    assert (moved["bootstrap"], moved["skills"]) == (
        filled["prompt"]["bootstrap"], filled["prompt"]["skills"],
    )  # fmt: skip
    assert moved["hash"] != filled["prompt"]["hash"]

    assert by_tools == [chosen["run"]["id"]]
    assert by_prompt == [default["run"]["id"], chosen["run"]["id"]]
    assert by_mode == []
    assert bad.status_code == 400 and "prompt must be a hash" in bad.json()["error"]
    assert facets["modes"] == ["react"]
    assert facets["prompts"] == sorted({filled["prompt"]["hash"], moved["hash"]})
    assert facets["tools"] == sorted({filled["tools_hash"], ran["tools_hash"]})


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
async def test_postgresql_keeps_and_filters_it_too(stack: Stack, database_url: str) -> None:
    await stack.start_worker()
    stack.fake.responder = lambda request: Reply(text="Hi.")
    async with stack.client() as client:
        planned = await run(client, config={"mode": "plan_execute", "tools": ["calculator"]})
        assert await listed(client, mode="plan_execute") == [planned["run"]["id"]]
        assert await listed(client, tools=planned["config"]["tools_hash"]) == [planned["run"]["id"]]
