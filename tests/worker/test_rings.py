"""A drain job rung for is taken by one worker in one call, never also by arq's poll."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.constants import default_queue_name, in_progress_key_prefix, job_key_prefix
from redis.exceptions import WatchError

from bot.redis import keys
from worker.picking import Rings, rung_session

JOB_ID = keys.wake_job_id("tg:7:12", 3)


@pytest.fixture
async def pool(redis_url: str) -> AsyncIterator[ArqRedis]:
    pool = await create_pool(RedisSettings.from_dsn(redis_url))
    yield pool
    await pool.aclose()


@pytest.mark.parametrize(
    ("job_id", "session"),
    [
        (JOB_ID, "tg:7:12"),
        (keys.wake_job_id("slack:T1:C1:171.5", 1), "slack:T1:C1:171.5"),
        ("drain:tg:7:next", None),  # no generation
        ("expire:c1", None),
        ("0b9e7c0c5d2a4d0c9a8e6f1f2b3c4d5e", None),  # arq's own id for a job without one
    ],
)
def test_a_drain_jobs_id_names_its_session(job_id: str, session: str | None) -> None:
    assert rung_session(job_id) == session


async def test_a_rung_job_is_claimed_once_and_leaves_nothing_behind(pool: ArqRedis) -> None:
    assert await pool.enqueue_job(keys.WAKE_SESSION_JOB, "tg:7:12", _job_id=JOB_ID) is not None
    rings = Rings(pool, default_queue_name)
    assert await rings.claim(JOB_ID)
    assert not await rings.claim(JOB_ID)  # another worker heard it too
    assert await pool.zcard(default_queue_name) == 0
    assert not await pool.exists(job_key_prefix + JOB_ID)
    # the job's id is free again: the sweep's wake-up of the same generation is taken
    assert await pool.enqueue_job(keys.WAKE_SESSION_JOB, "tg:7:12", _job_id=JOB_ID) is not None


async def test_a_job_arq_started_first_is_left_to_it(pool: ArqRedis) -> None:
    assert await pool.enqueue_job(keys.WAKE_SESSION_JOB, "tg:7:12", _job_id=JOB_ID) is not None
    await pool.psetex(in_progress_key_prefix + JOB_ID, 610_000, b"1")
    assert not await Rings(pool, default_queue_name).claim(JOB_ID)
    assert await pool.zscore(default_queue_name, JOB_ID) is not None


async def test_a_poll_that_saw_the_job_before_the_claim_does_not_start_it(
    pool: ArqRedis,
) -> None:
    """arq's start: the mark watched, checked absent and the job found queued, then the mark
    set in a transaction; a claim in between makes that transaction fail."""
    assert await pool.enqueue_job(keys.WAKE_SESSION_JOB, "tg:7:12", _job_id=JOB_ID) is not None
    mark = in_progress_key_prefix + JOB_ID
    async with pool.pipeline(transaction=True) as pipe:
        await pipe.watch(mark)
        assert not await pipe.exists(mark)
        assert await pipe.zscore(default_queue_name, JOB_ID) is not None
        assert await Rings(pool, default_queue_name).claim(JOB_ID)
        pipe.multi()  # type: ignore[no-untyped-call]
        pipe.psetex(mark, 610_000, b"1")
        with pytest.raises(WatchError):
            await pipe.execute()
