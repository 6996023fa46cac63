"""One reply of the model with many distinct `delegate` calls, with the default settings: a
turn starts at most PARLEY_HELPERS_PER_TURN (8) helpers, and each call past them gets a result
saying so without running. Real worker, web app, Redis and database; fake model."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from tests.integration.worker.test_helper_accounting import runs_recorded
from tests.integration.worker.test_helpers import brain, helpers_of, tool_results
from tests.support.stack import Stack, send, texts

pytestmark = pytest.mark.e2e
CALLS = 40
BOUND = 8  # PARLEY_HELPERS_PER_TURN by default


async def test_a_reply_with_many_delegate_calls_runs_a_bounded_number_of_helpers(
    stack: Stack,
) -> None:
    await stack.start_worker()
    stack.fake.responder = brain(CALLS, delay=0)
    async with stack.client() as client:
        session = await stack.session(client)
        events = await send(client, session, "please split this")
        assert len(helpers_of(stack)) == BOUND  # the model was asked by so many helpers
        stats = await runs_recorded(client, BOUND + 1)  # the turn's own, and its helpers'
    results = tool_results(events)
    assert len(results) == CALLS
    ran, refused = results[:BOUND], results[BOUND:]
    assert [r["content"].split("\n")[-1] for r in ran] == [f"result {n}" for n in range(BOUND)]
    assert all(r["is_error"] for r in refused)
    assert {r["content"] for r in refused} == {
        f"Not run: a turn starts at most {BOUND} helpers and this one has started them all, "
        "so this helper did not run; do this part yourself."
    }
    assert texts(events).startswith("summed: result 0 | ")
    redis = Redis.from_url(stack.redis_url)
    pattern = f"parley:{{http:{session}:helper-*}}:events"
    streams = [key async for key in redis.scan_iter(match=pattern)]
    await redis.aclose()
    assert len(streams) == BOUND
    assert stats["runs"] == BOUND + 1
