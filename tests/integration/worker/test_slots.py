"""A message is not kept waiting by a full worker's long turns: a wake-up that finds no room
goes back to the queue, for a worker that has some."""

from __future__ import annotations

import asyncio

import pytest
from arq.constants import default_queue_name
from redis.asyncio import Redis

from tests.fakes.llm import Reply
from tests.support.stack import Stack, send, texts
from tests.support.waiting import WITHIN, until

pytestmark = pytest.mark.e2e

# The sweep, which would re-wake a forgotten session after a few seconds, is kept out of it
# (an hour), so only the wake-up itself can bring the answer.
HOUR = "3600"


async def queued(redis_url: str, count: int) -> None:
    """Once `count` jobs wait in arq's queue."""
    redis = Redis.from_url(redis_url)
    try:

        async def enough() -> bool:
            return int(await redis.zcard(default_queue_name)) >= count

        await until(enough, f"{count} jobs queued", every=0.02)
    finally:
        await redis.aclose()


@pytest.mark.parametrize(
    "stack", [{"PARLEY_WORKER_SESSIONS": "1", "PARLEY_SWEEP_INTERVAL": HOUR}], indirect=True
)
async def test_a_message_taken_by_a_full_worker_goes_to_one_with_room(stack: Stack) -> None:
    """The first worker's first poll takes both wake-ups; its one slot goes to the long turn.
    The other message must not wait for that turn to end: the second worker answers it."""
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(text="A long story, told slowly", chunk_size=4, gate=gate, gate_after=1),
        Reply(text="Quick."),
    )
    async with stack.client() as client:
        story, question = await stack.session(client), await stack.session(client)
        long_reply = asyncio.create_task(send(client, story, "tell me a long story"))
        await queued(stack.redis_url, 1)
        quick_reply = asyncio.create_task(send(client, question, "and a short answer?"))
        await queued(stack.redis_url, 2)
        await stack.start_worker()
        await until(lambda: len(stack.fake.requests) == 1, "the long turn called the model")
        await stack.start_worker()
        try:
            async with asyncio.timeout(WITHIN):
                quick = await quick_reply
            assert not long_reply.done()  # answered while the long turn still held its slot
        finally:
            gate.set()
        assert texts(quick) == "Quick."
        assert texts(await long_reply) == "A long story, told slowly"
    assert "tell me a long story" in str(stack.fake.requests[0].body["messages"])


@pytest.mark.parametrize(
    "stack",
    [{"PARLEY_WORKER_SESSIONS": "1", "PARLEY_SWEEP_INTERVAL": HOUR, "PARLEY_POLL_DELAY": HOUR}],
    indirect=True,
)
async def test_a_full_worker_takes_the_waiting_message_as_soon_as_it_has_room(
    stack: Stack,
) -> None:
    """A full worker ignores the ring for new work, so the message waits in arq's queue; the
    moment the long turn ends, the worker reads the queue itself rather than at its next
    poll (an hour here) or at the sweep's re-wake (an hour too)."""
    gate = asyncio.Event()
    stack.fake.enqueue(
        Reply(text="A long story, told slowly", chunk_size=4, gate=gate, gate_after=1),
        Reply(text="Quick."),
    )
    await stack.start_worker()
    async with stack.client() as client:
        story, question = await stack.session(client), await stack.session(client)
        long_reply = asyncio.create_task(send(client, story, "tell me a long story"))
        await until(lambda: len(stack.fake.requests) == 1, "the long turn called the model")
        quick_reply = asyncio.create_task(send(client, question, "and a short answer?"))
        await queued(stack.redis_url, 1)
        assert len(stack.fake.requests) == 1  # the full worker left it queued
        gate.set()
        async with asyncio.timeout(WITHIN):
            assert texts(await long_reply) == "A long story, told slowly"
            assert texts(await quick_reply) == "Quick."
