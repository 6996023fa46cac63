"""`POST /api/agent/run` answered as JSON carries the run's metrics, the very numbers
`GET /api/traces/{id}` shows, and the compliance score of each answer checked against its
output schema, as the trace's validation nodes keep it. Real web process and worker, the fake
model behind the real SDK."""

from __future__ import annotations

from typing import Any

import httpx

from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.stack import Stack

SCHEMA = {
    "type": "object",
    "required": ["answer"],
    "properties": {"answer": {"type": "integer"}},
    "additionalProperties": False,
}


async def run(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    answer = await client.post("/api/agent/run", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


async def trace_of(client: httpx.AsyncClient, answer: dict[str, Any]) -> dict[str, Any]:
    """The run's trace: there already, since the answer waited for the run's record."""
    found = await client.get(answer["trace"])
    assert found.status_code == 200, found.text
    trace: dict[str, Any] = found.json()
    return trace


def from_trace(trace: dict[str, Any]) -> dict[str, Any]:
    """The metrics an answer must carry, as the trace's own answer gives them."""
    kept = trace["metrics"]
    return {
        **kept,
        "latency_ms": trace["run"]["latency_ms"],
        "first_text_ms": trace["run"]["first_text_ms"],
        "tool_calls": sum(kept["tool_usage"].values()),
    }


async def test_the_answer_carries_the_metrics_its_trace_shows(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text="It is 42."),
    )
    async with stack.client() as client:
        body = {"task": "6*7?", "config": {"tools": ["calculator"], "max_steps": 3}}
        answer = await run(client, body)
        trace = await trace_of(client, answer)
    metrics = answer["metrics"]
    assert metrics == from_trace(trace)
    assert metrics["reliability"] == trace["run"]["reliability"] == 100
    assert (metrics["steps"], metrics["tool_calls"]) == (3, 1)  # two model calls, one tool call
    assert metrics["tool_usage"] == {"calculator": 1}
    assert 0 <= metrics["first_text_ms"] <= metrics["latency_ms"]
    assert metrics["compliance"] is None and answer["compliance"] is None  # no schema


async def test_each_validation_has_its_compliance_and_the_run_its_last(stack: Stack) -> None:
    """The first answer has the right shape but a string for the integer (three of its four
    checks pass); the repair matches."""
    await stack.start_worker()
    stack.fake.enqueue(Reply(text='{"answer": "forty-two"}'), Reply(text='{"answer": 42}'))
    async with stack.client() as client:
        answer = await run(client, {"task": "6*7 as JSON", "config": {"output_schema": SCHEMA}})
        trace = await trace_of(client, answer)
    assert [(v["valid"], v["compliance"]) for v in answer["validations"]] == [
        (False, 75),
        (True, 100),
    ]
    nodes = [n["detail"]["compliance"] for n in trace["nodes"] if n["kind"] == "validation"]
    assert nodes == [75, 100]
    assert answer["output"] == {"answer": 42} and answer["compliance"] == 100
    assert answer["metrics"] == from_trace(trace)
    assert answer["metrics"]["compliance"] == 100
    assert answer["metrics"]["reliability"] == 90 and answer["metrics"]["schema_violations"] == 1


async def test_an_answer_that_never_matched_keeps_its_last_score(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(
        Reply(text="Forty-two."), Reply(text='{"answer": 42, "unit": "", "note": ""}')
    )
    async with stack.client() as client:
        body = {"task": "6*7 as JSON", "config": {"output_schema": SCHEMA, "repair_attempts": 1}}
        answer = await run(client, body)
        trace = await trace_of(client, answer)
    assert answer["status"] == "failed" and answer["output"] is None
    # No JSON at all, then three checks of five passed: two properties too many.
    assert [v["compliance"] for v in answer["validations"]] == [0, 60]
    assert answer["compliance"] == answer["metrics"]["compliance"] == 60
    assert answer["metrics"] == from_trace(trace)
