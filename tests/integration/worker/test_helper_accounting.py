"""What a helper leaves behind, against a real worker (in the test's loop), Redis and the fake
model: its tokens counted once (in its parent's run, not again in the deployment's totals),
and its hot state gone once its parent read its answer, its stream and dedup marker kept."""

from __future__ import annotations

from typing import Any

import httpx
from redis.asyncio import Redis

from tests.fakes.llm import RecordedRequest, Reply, ToolCallSpec
from tests.support.stack import Stack, send, texts
from tests.support.waiting import until

# What a helper's session keeps in Redis once its answer was read (`bot.session.helper_cleanup`).
KEPT = {"events", "seen:helper:toolu_job0", "gen", "fence"}


def is_helper(request: RecordedRequest) -> bool:
    return "job " in str(request.body["messages"][0]["content"])


def answer(request: RecordedRequest) -> Reply:
    """A parent asks one helper; the helper writes 300 tokens; the parent sums it up."""
    if is_helper(request):
        return Reply(text="result 0", output_tokens=300)
    if request.tool_results():
        return Reply(text="summed: result 0")
    return Reply(tool_calls=[ToolCallSpec("delegate", {"task": "do job 0"}, id="toolu_job0")])


async def session_keys(redis: Redis, session: str) -> dict[str, set[str]]:
    """The Redis keys of `session` and of its helpers, by session, named as in `keys`."""
    found: dict[str, set[str]] = {}
    for pattern in (f"parley:{{http:{session}}}:*", f"parley:{{http:{session}:helper-*}}:*"):
        async for key in redis.scan_iter(match=pattern):
            owner, _, name = key.split("{", 1)[1].partition("}:")
            found.setdefault(owner, set()).add(name)
    return found


async def runs_recorded(client: httpx.AsyncClient, runs: int) -> dict[str, Any]:
    """The deployment's stats, once the record holds `runs` runs, each in a session of its
    own. The counts are read one statement after another, so a run whose record commits
    between them shows in one count before the other: both are waited for."""
    stats: dict[str, Any] = {}

    async def written() -> bool:
        stats.update((await client.get("/api/stats")).json())
        return bool(stats["runs"] == runs and stats["sessions"] == runs)

    await until(written, f"{runs} runs recorded")
    return stats


async def test_a_turn_with_a_helper_counts_its_tokens_once(stack: Stack) -> None:
    """With the default settings: the parent's run holds the helper's tokens, and the
    deployment's totals (`/api/stats`: usage, by platform, by model) equal the parent's
    run's usage, though the helper's run is recorded and counted as a run of its own."""
    await stack.start_worker()
    stack.fake.responder = answer
    async with stack.client() as client:
        session = await stack.session(client)
        events = await send(client, session, "please split this")
        stats = await runs_recorded(client, 2)
        parent = (await client.get(f"/api/sessions/{session}")).json()
    assert texts(events) == "summed: result 0"
    (completed,) = [e for e in events if e["type"] == "completed"]
    used = completed["usage"]
    assert used["output_tokens"] > 300  # the parent's run holds the helper's 300 written
    expected = (used["input_tokens"], used["output_tokens"])
    assert (parent["usage"]["input"], parent["usage"]["output"]) == expected
    assert (stats["usage"]["input"], stats["usage"]["output"]) == expected
    ((model, by_model),) = stats["by_model"].items()
    assert (by_model["input"], by_model["output"]) == expected, model
    assert stats["by_platform"]["http"]["output"] == used["output_tokens"]
    assert (stats["sessions"], stats["runs"]) == (2, 2)  # the helper's run is still listed


async def test_a_helpers_state_goes_once_its_answer_was_read(stack: Stack) -> None:
    """After the parent's turn, the helper's session keeps only its stream, its dedup
    marker and its two counters in Redis: its state, context and version are gone, and the
    parent's own state stays."""
    await stack.start_worker()
    stack.fake.responder = answer
    redis = Redis.from_url(stack.redis_url, decode_responses=True)
    try:
        async with stack.client() as client:
            session = await stack.session(client)
            events = await send(client, session, "please split this")
            found = await session_keys(redis, session)
    finally:
        await redis.aclose()
    parent = f"http:{session}"
    helpers = sorted(found.keys() - {parent})
    assert helpers == [f"{parent}:helper-toolu_job0"], found
    assert found[helpers[0]] == KEPT
    assert {"state", "context", "saved"} <= found[parent]
    assert texts(events) == "summed: result 0"
