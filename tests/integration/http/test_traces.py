"""Traces and run metrics through the HTTP API, recorded by a real worker: a run's model
calls, tool calls and retries, its graph ready to draw, and a window's aggregates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from tests.fakes.llm import Fail, Reply, ToolCallSpec
from tests.support.stack import Stack, send
from tests.support.waiting import until


async def recorded(client: httpx.AsyncClient, session: str, runs: int) -> str:
    """The newest run's id, once the session's record has `runs` runs: the worker writes a
    run's record after its reply has been streamed."""
    detail: dict[str, Any] = {}

    async def written() -> bool:
        detail.update((await client.get(f"/api/sessions/{session}")).json())
        return bool(detail.get("runs") == runs)

    await until(written, f"{runs} runs of {session} recorded")
    return str(detail["recent"][-1]["run_id"])


def kinds(trace: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(n["kind"], n["name"], n["status"]) for n in trace["nodes"]]


async def test_a_run_with_a_tool_and_a_retry_is_traced_and_measured(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "12*12"})]),
        Fail(status=529, error_type="overloaded_error", message="busy"),
        Reply(text="It is 144."),
        Reply(text="Hello."),
    )
    async with stack.client() as client:
        session = await stack.session(client)
        await send(client, session, "what is 12*12?")
        first = await recorded(client, session, 1)
        await send(client, session, "hi")
        second = await recorded(client, session, 2)
        trace = (await client.get(f"/api/traces/{first}")).json()
        graph = (await client.get(f"/api/traces/{first}/graph")).json()
        window = (await client.get("/api/metrics/runs")).json()
        start = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
        bounded = await client.get("/api/metrics/runs", params={"start": start, "limit": 1})
        unknown = await client.get(f"/api/traces/{'0' * 32}")
        bad_id = await client.get("/api/traces/not-a-run")
        bad_date = await client.get("/api/metrics/runs", params={"start": "yesterday"})
        digits = await client.get("/api/metrics/runs", params={"start": "٢٠٢٦-11-24"})
        backwards = await client.get(
            "/api/metrics/runs", params={"start": "2026-11-25", "end": "2026-11-24"}
        )
    assert kinds(trace) == [
        ("model_call", "model", "ok"),
        ("tool_call", "calculator", "ok"),
        ("model_call", "model", "ok"),
        ("retry", "retry", "error"),
    ]
    edges = [(e["source"], e["target"], e["type"]) for e in trace["edges"]]
    assert edges == [(1, 2, "success"), (1, 3, "success"), (3, 4, "retry")]
    metrics = trace["metrics"]
    assert (metrics["steps"], metrics["failed"], metrics["retries"]) == (3, 0, 1)
    assert metrics["tool_usage"] == {"calculator": 1} and metrics["tokens"] > 0
    assert metrics["reliability"] == 95 and trace["run"]["reliability"] == 95
    assert trace["run"]["id"] == first and trace["run"]["status"] == "completed"
    assert "12*12" in trace["nodes"][1]["detail"]["arguments"]
    assert all({"x", "y", "latency_ms"} <= set(n) for n in graph["nodes"])
    assert [(n["x"], n["y"]) for n in graph["nodes"]][:3] == [(260, 0), (260, 110), (520, 0)]

    assert window["total"] == 2 and window["success_rate"] == 1.0
    assert [run["id"] for run in window["items"]] == [second, first]  # newest first
    assert window["average_reliability"] == 97.5  # (95 + 100) / 2
    assert window["average_latency_ms"] > 0
    assert bounded.status_code == 200 and len(bounded.json()["items"]) == 1
    assert bounded.json()["total"] == 2
    assert unknown.status_code == 404 and unknown.json()["error"] == "unknown run"
    assert bad_id.status_code == 400
    assert bad_date.status_code == 400 and "ISO 8601" in bad_date.json()["error"]
    assert digits.status_code == 400
    assert backwards.status_code == 400
