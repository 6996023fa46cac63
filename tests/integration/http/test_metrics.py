"""`/metrics` on `parley web` shows what a `parley worker` process counted: the worker
publishes its snapshot to Redis (every 5 s, the default) and the web process adds up every
live snapshot. Behind the API token like the API."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families
from redis.asyncio import Redis

from bot.telemetry import metrics
from tests.fakes.llm import Reply, ToolCallSpec
from tests.support.stack import Stack, send
from tests.support.waiting import until

TOKEN = "metrics-token"


def value(text: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    return 0.0


@pytest.mark.parametrize("stack", [{"PARLEY_API_TOKEN": TOKEN}], indirect=True)
async def test_a_worker_processs_counts_reach_the_web_processs_metrics(stack: Stack) -> None:
    await stack.start_worker_process()
    stack.fake.enqueue(
        Reply(tool_calls=[ToolCallSpec("calculator", {"expression": "6*7"})]),
        Reply(text="42."),
    )
    async with stack.client() as client:
        assert (await client.get("/metrics")).status_code == 401
        client.headers["Authorization"] = f"Bearer {TOKEN}"
        session = await stack.session(client)
        await send(client, session, "what is 6*7?")
        redis = Redis.from_url(stack.redis_url)
        published: list[str] = []

        async def snapshot() -> bool:  # the worker's next one, within 5 s
            published[:] = await metrics.snapshots(redis)
            return bool(published) and value(published[0], "parley_turns_total") >= 1

        await until(snapshot, "the worker's snapshot counting the turn", every=0.2)
        answer = await client.get("/metrics")
        shown = answer.text
        await redis.aclose()
    (worker,) = published  # the test process publishes nothing; the worker process did
    assert value(shown, "parley_turns_total", trigger="message") >= value(
        worker, "parley_turns_total", trigger="message"
    )
    assert answer.headers["content-type"].startswith("text/plain")
    assert value(shown, "parley_tool_calls_total", tool="calculator", outcome="ok") >= 1
    assert value(shown, "parley_model_calls_total", outcome="ok") >= 2
    assert value(shown, "parley_pickup_seconds_count") >= 1
    assert value(shown, "parley_turn_seconds_count") >= 1
    assert value(shown, "parley_first_text_seconds_count") >= 1
    assert value(shown, "parley_run_iterations_count") >= 1
    assert value(shown, "parley_run_iterations_bucket", le="2.0") >= 1  # two model calls
    assert value(shown, "parley_run_state_seconds_total", state="calling") > 0
    assert value(shown, "parley_run_state_seconds_total", state="tools") > 0
