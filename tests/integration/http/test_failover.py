"""A model that stays overloaded hands the turn to the next of PARLEY_FALLBACK_MODELS, across
APIs, in a `parley worker` process with the default retries: the answer is shown once,
the chat is told which model answered, and the record, the trace and `/metrics` name both."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from bot.telemetry import metrics
from tests.fakes.llm import OPENAI_KEY, Fail, Reply
from tests.integration.http.test_metrics import value
from tests.support.stack import Stack, recorded, send, texts
from tests.support.waiting import until

pytestmark = pytest.mark.e2e
OVERLOADED = Fail(529, "overloaded_error", "Overloaded")


async def test_a_persistent_529_fails_over_to_the_next_model(stack: Stack) -> None:
    stack.env |= {"PARLEY_FALLBACK_MODELS": "gpt-test", "OPENAI_API_KEY": OPENAI_KEY,
                  "OPENAI_BASE_URL": stack.fake.openai_base_url}  # fmt: skip
    await stack.start_worker_process()
    attempts = 3  # PARLEY_LLM_ATTEMPTS, the default
    stack.fake.enqueue(*[OVERLOADED] * attempts, Reply(text="Answered all the same."))
    async with stack.client() as client:
        session = await stack.session(client)
        events = await send(client, session, "are you there?")
    detail = await recorded(stack, session, 2)
    async with stack.client() as client:
        [run] = (await client.get("/api/metrics/runs")).json()["items"]
        trace = (await client.get(f"/api/traces/{run['id']}")).json()
        redis = Redis.from_url(stack.redis_url)
        shown: list[str] = []

        async def counted() -> bool:  # the worker's next snapshot, within 5 s
            shown[:] = await metrics.snapshots(redis)
            return bool(shown) and value(shown[0], "parley_model_failovers_total") >= 1

        await until(counted, "the worker's snapshot counting the failover", every=0.2)
        await redis.aclose()

    assert [r.api for r in stack.fake.requests] == ["anthropic"] * attempts + ["openai"]
    [switched] = [e for e in events if e["type"] == "failover"]
    assert (switched["failed"], switched["model"]) == ("claude-test", "gpt-test")
    assert texts(events) == "Answered all the same."
    assert events[-1]["type"] == "completed" and events[-1]["model"] == "gpt-test"
    [answer] = [m for m in detail["recent"] if m["role"] == "assistant"]
    assert answer["model"] == "gpt-test" and run["model"] == "gpt-test"
    [failover] = [n for n in trace["nodes"] if n["kind"] == "failover"]
    assert failover["name"] == "claude-test → gpt-test" and "529" in failover["detail"]["error"]
    [call] = [n for n in trace["nodes"] if n["kind"] == "model_call"]
    assert call["detail"]["model"] == "gpt-test" and call["status"] == "ok"
    [snapshot] = shown
    assert value(snapshot, "parley_model_failovers_total", model="claude-test") == 1
    assert value(snapshot, "parley_model_calls_total", model="gpt-test", outcome="ok") == 1
