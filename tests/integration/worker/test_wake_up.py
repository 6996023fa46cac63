"""A message wakes an idle worker at once: it does not wait for the worker's next poll, nor
for arq to forget a wake-up whose worker was lost."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.constants import in_progress_key_prefix
from arq.jobs import Job

from bot.mailbox.inbox import Mailbox
from bot.vocabulary.envelope import Envelope, Sender
from tests.fakes.llm import Reply
from tests.support.stack import Stack, send, texts
from tests.support.waiting import until

pytestmark = pytest.mark.e2e

# A poll this rare would leave a message waiting an hour; the deadline is generous for a busy
# machine and still far below it.
HOUR = 3600
ANSWERED_WITHIN = 60


@pytest.mark.parametrize("stack", [{"PARLEY_POLL_DELAY": str(HOUR)}], indirect=True)
async def test_a_message_is_taken_without_waiting_for_the_poll(stack: Stack) -> None:
    await stack.start_worker()
    stack.fake.enqueue(Reply(text="At once."), Reply(text="Again."))
    async with stack.client() as client:
        session = await stack.session(client)
        async with asyncio.timeout(ANSWERED_WITHIN):
            first = await send(client, session, "hi")
            second = await send(client, session, "and again")
    assert (texts(first), texts(second)) == ("At once.", "Again.")


class LostWakes:
    """Enqueues a drain job and leaves it as a worker does that loses Redis, or is killed,
    after starting the job and before telling arq it finished: queued, and marked running
    for arq's whole in-progress TTL (610 s with the defaults)."""

    def __init__(self, pool: ArqRedis) -> None:
        self.pool = pool

    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> Job | None:
        job = await self.pool.enqueue_job(function, *args, **kwargs)
        assert job is not None
        await self.pool.psetex(in_progress_key_prefix + job.job_id, 610_000, b"1")
        return job


async def test_a_wake_up_whose_worker_was_lost_is_taken_within_seconds(stack: Stack) -> None:
    """With the defaults: the sweep wakes the session again with the same job id, which arq
    refuses while the job is marked running; the worker lifts the stale mark instead."""
    await stack.start_worker_process()
    stack.fake.enqueue(Reply(text="Late, but here."))
    pool = await create_pool(RedisSettings.from_dsn(stack.redis_url))
    mailbox = Mailbox(pool, LostWakes(pool))
    hello = Envelope(id="w1", session="test:lost", text="hello", sender=Sender(id="test:u"))
    await mailbox.submit(hello)
    took = await until(lambda: len(stack.fake.requests) == 1, "the message answered")
    print(f"\na wake-up its worker lost was taken after {took:.1f} s (arq's mark: 610 s)")

    async def emptied() -> bool:
        return await mailbox.pending("test:lost") == 0

    await until(emptied, "the inbox emptied")
    await pool.aclose()
