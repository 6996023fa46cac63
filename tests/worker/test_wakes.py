"""A drain job that arq still marks as running long after it started is lifted, not waited on."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.constants import in_progress_key_prefix
from arq.jobs import Job

from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.vocabulary.envelope import Envelope, Sender
from worker.wakes import STUCK_S, QueueJobs, Wakes

IN_PROGRESS_S = 610.0  # what arq's worker sets with the retention prune's timeout of 600 s
JOB_ID = keys.wake_job_id("test:s", 1)
MARK = in_progress_key_prefix + JOB_ID


@pytest.fixture
async def pool(redis_url: str) -> AsyncIterator[ArqRedis]:
    pool = await create_pool(RedisSettings.from_dsn(redis_url))
    yield pool
    await pool.aclose()


async def started(pool: ArqRedis, ago: float) -> None:
    """The drain job queued and marked running `ago` seconds ago, as arq's worker marks it."""
    assert await pool.enqueue_job(keys.WAKE_SESSION_JOB, "test:s", _job_id=JOB_ID) is not None
    await pool.psetex(MARK, int((IN_PROGRESS_S - ago) * 1000), b"1")


async def test_a_drain_job_marked_running_long_ago_is_lifted_and_rung_for(pool: ArqRedis) -> None:
    await started(pool, ago=STUCK_S + 5)
    job = await Wakes(pool, IN_PROGRESS_S).enqueue_job(
        keys.WAKE_SESSION_JOB, "test:s", _job_id=JOB_ID
    )
    assert job is not None and job.job_id == JOB_ID  # so the mailbox rings for it
    assert not await pool.exists(MARK)
    assert await pool.zscore("arq:queue", JOB_ID) is not None  # still queued, to run again


async def test_a_drain_job_that_just_started_keeps_its_mark(pool: ArqRedis) -> None:
    await started(pool, ago=1)
    wakes = Wakes(pool, IN_PROGRESS_S)
    assert await wakes.enqueue_job(keys.WAKE_SESSION_JOB, "test:s", _job_id=JOB_ID) is None
    assert await pool.exists(MARK)


async def test_a_queued_drain_job_not_yet_started_is_left_alone(pool: ArqRedis) -> None:
    assert await pool.enqueue_job(keys.WAKE_SESSION_JOB, "test:s", _job_id=JOB_ID) is not None
    wakes = Wakes(pool, IN_PROGRESS_S)
    assert await wakes.enqueue_job(keys.WAKE_SESSION_JOB, "test:s", _job_id=JOB_ID) is None
    assert await pool.zcard("arq:queue") == 1


async def test_other_jobs_are_enqueued_as_arq_does(pool: ArqRedis) -> None:
    expiry = "expire:c1"
    await pool.enqueue_job(keys.EXPIRY_JOB, "c1", _job_id=expiry)
    await pool.psetex(in_progress_key_prefix + expiry, int((IN_PROGRESS_S - 60) * 1000), b"1")
    wakes = Wakes(pool, IN_PROGRESS_S)
    assert await wakes.enqueue_job(keys.EXPIRY_JOB, "c1", _job_id=expiry) is None
    assert await pool.exists(in_progress_key_prefix + expiry)
    fresh = await wakes.enqueue_job(keys.WAKE_SESSION_JOB, "test:t", _job_id="drain:test:t:1")
    assert fresh is not None and fresh.job_id == "drain:test:t:1"


async def test_a_message_is_queued_with_its_drain_job_and_rung_for_in_one_call(
    pool: ArqRedis,
) -> None:
    """The web process's mailbox: the drain job goes into arq's queue, as arq would put it
    there, in the Lua call that takes the message in, and is rung for there too."""
    mailbox = Mailbox(pool, QueueJobs(pool))
    rings = pool.pubsub()
    await rings.subscribe(keys.JOBS_CHANNEL)
    assert (await rings.get_message(timeout=5))["type"] == "subscribe"
    await pool.config_resetstat()
    first = await mailbox.submit(hello("m1"))
    assert first.generation == 1
    job_id = keys.wake_job_id("test:s", 1)
    info = await Job(job_id, pool).info()
    assert info is not None and (info.function, info.args) == (keys.WAKE_SESSION_JOB, ("test:s",))
    assert await pool.zscore("arq:queue", job_id) is not None
    ring = await rings.get_message(ignore_subscribe_messages=True, timeout=5)
    assert ring is not None and ring["data"] == job_id.encode()
    assert "cmdstat_watch" not in await pool.info("commandstats")  # not arq's enqueue
    second = await mailbox.submit(hello("m2"))  # while the job waits in the queue
    assert second.generation == 1 and await pool.zcard("arq:queue") == 1
    await rings.aclose()  # type: ignore[no-untyped-call]


def hello(envelope_id: str) -> Envelope:
    return Envelope(id=envelope_id, session="test:s", text="hi", sender=Sender(id="test:u"))
