"""A worker killed mid-reply in a long session, with the default settings and real worker
processes: the worker that takes the session over loads it cold (its older turns are in SQL,
`bot.session.states`) and sends the model the whole conversation, each turn once."""

from __future__ import annotations

import asyncio
import json

from redis.asyncio import Redis

from bot.redis import keys
from bot.redis.results import done
from tests.fakes.llm import Reply
from tests.session.test_hot_state import PADDING, brain
from tests.support.stack import Stack, read_events, send, texts
from tests.support.waiting import until


async def test_a_long_session_whose_worker_is_killed_is_finished_cold_with_nothing_lost(
    stack: Stack,
) -> None:
    """Default settings, real worker processes: a session whose older turns are in SQL, its
    worker killed mid-reply. The worker that takes it over has no copy of it: it sends the
    model every earlier question and answer once, and the new question once."""
    stack.fake.responder = brain
    first = await stack.start_worker_process()
    async with stack.client() as client:
        session = await stack.session(client)
        for n in range(40):
            await send(client, session, f"Question {n:03d}. {PADDING}")
        gate = asyncio.Event()
        stack.fake.enqueue(Reply(text="cut off by a crash " * 8, chunk_size=4, gate=gate,
                                 gate_after=8))  # fmt: skip
        asked = len(stack.fake.requests)
        async with client.stream(
            "POST", f"/api/sessions/{session}/messages", json={"text": "Question 040."}
        ) as response:
            reading = asyncio.create_task(read_events(response))
            await until(lambda: len(stack.fake.requests) > asked, "the last question asked")
            await stack.start_worker_process()
            stack.kill(first)
            events = await asyncio.wait_for(reading, 60)
        gate.set()
    assert texts(events).startswith("Answer to Question 040.")
    sent = json.dumps(stack.fake.requests[-1].body["messages"])
    for n in range(41):  # each question once, as its own text block, and each answer once
        assert sent.count(f'"text": "Question {n:03d}.') == 1, n
        assert sent.count(f"Answer to Question {n:03d}.") == (n < 40), n
    redis = Redis.from_url(stack.redis_url)
    try:
        in_redis = await done(redis.llen(keys.session(f"http:{session}", "context")))
    finally:
        await redis.aclose()
    assert in_redis < 40  # the older turns came from SQL
