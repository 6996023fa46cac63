"""A run is readable while it runs, and its trace says where its time went. Through a real
web app and worker, the fake model behind the real SDK, with the default settings:

- `GET /api/traces/{id}` answers for an API run whose message waits for a worker (`queued`),
  then while its answer streams (`running`, in the state `streaming`, with the tool call it
  made and the numbers so far), then from its record;
- the recorded run's metrics split its latency into calling the model, streaming, running
  tools and the rest, and the runs list averages them with its iterations;
- the run a person's decision resumes counts the time the person took."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from tests.fakes.llm import Reply, ToolCallSpec
from tests.integration.http.test_confirmations import ask, decide
from tests.support.stack import Stack, read_events
from tests.support.waiting import until

HELD_S = 0.6  # the answer's stream is held this long, half way through
THINK_S = 0.4  # the person takes this long to decide


async def trace(client: httpx.AsyncClient, run_id: str) -> dict[str, Any]:
    found = await client.get(f"/api/traces/{run_id}")
    assert found.status_code == 200, found.text
    shown: dict[str, Any] = found.json()
    return shown


async def test_a_run_is_read_while_queued_and_running_then_from_its_record(
    stack: Stack,
) -> None:
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text="It is forty-two, as computed.", chunk_size=4, gate=gate, gate_after=5),
    )
    body = {"task": "6*7?", "stream": True, "config": {"tools": ["calculator"]}}
    async with (
        stack.client() as client,
        client.stream("POST", "/api/agent/run", json=body) as response,
    ):
        assert response.status_code == 200
        run_id = response.headers["X-Parley-Run"]
        queued = await trace(client, run_id)  # no worker yet: it waits in its inbox
        await stack.start_worker()

        async def streaming() -> bool:
            return bool((await trace(client, run_id))["run"]["state"] == "streaming")

        await until(streaming, "the run shown streaming its answer")
        running = await trace(client, run_id)
        graph = await client.get(f"/api/traces/{run_id}/graph")
        await asyncio.sleep(HELD_S)
        gate.set()
        events = await read_events(response)

        async def recorded_run() -> bool:
            recorded.update(await trace(client, run_id))
            return bool(recorded["run"]["status"] != "running")

        recorded: dict[str, Any] = {}
        await until(recorded_run, "the run's record")  # its progress shown until then

    assert queued["run"]["status"] == "queued" and queued["nodes"] == []
    assert queued["run"]["trigger"] == "api" and queued["run"]["model"] == "claude-test"
    run = running["run"]
    assert (run["status"], run["iterations"], run["finished_at"]) == ("running", 2, None)
    assert [(n["kind"], n["name"], n["status"]) for n in running["nodes"]] == [
        ("model_call", "model", "ok"),
        ("tool_call", "calculator", "ok"),
        ("model_call", "model", "ok"),
    ]
    assert running["nodes"][-1]["ended_at"] is None  # the answer's call goes on
    assert running["metrics"]["tool_usage"] == {"calculator": 1}
    assert "tools" in running["states"] and running["states"]["calling"] > 0  # its batch ran
    assert graph.status_code == 200 and len(graph.json()["nodes"]) == 3

    assert events[-1]["type"] == "completed"
    assert recorded["run"]["status"] == "completed" and "state" not in recorded["run"]
    spent = recorded["metrics"]["states"]
    assert spent["streaming"] >= HELD_S * 1000  # held mid-stream
    assert spent["calling"] > 0 and spent["person"] == 0
    latency = recorded["run"]["latency_ms"]
    assert spent["calling"] + spent["streaming"] + spent["tools"] <= latency
    assert running["run"]["latency_ms"] < latency


async def test_the_runs_list_averages_where_time_went_and_counts_a_persons_wait(
    stack: Stack,
) -> None:
    await stack.start_worker()
    async with stack.client() as client:
        _, asked = await ask(stack, client)
        await asyncio.sleep(THINK_S)
        stack.fake.enqueue(Reply(text="Launched."))
        await decide(client, asked["confirmation_id"], "approve")

        async def listed() -> bool:
            found = await client.get("/api/metrics/runs", params={"trigger": "decision"})
            decided.update(found.json())
            return bool(decided["total"] == 1)

        decided: dict[str, Any] = {}
        await until(listed, "the decision's run recorded")
        everything = (await client.get("/api/metrics/runs")).json()
        resumed = await trace(client, decided["items"][0]["id"])

    waited = resumed["metrics"]["states"]["person"]
    assert THINK_S * 1000 <= waited < 10_000
    assert decided["average_states_ms"]["person"] == waited
    steps = [run["iterations"] for run in everything["items"]]
    assert everything["total"] == 2 and everything["max_iterations"] == max(steps) >= 1
    assert everything["average_iterations"] == sum(steps) / 2
    asked_first = [run for run in everything["items"] if run["trigger"] == "message"]
    assert [run["status"] for run in asked_first] == ["waiting"]
    # the window's person average is over both runs: the asking run waited for nobody
    assert everything["average_states_ms"]["person"] == waited / 2
