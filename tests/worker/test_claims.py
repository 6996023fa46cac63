"""A rung worker claims a message's drain job in one step: arq never runs it too, and a job
arq already started, a deferred one, or one whose id names no session is left to arq."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from arq.connections import ArqRedis, RedisSettings, create_pool
from arq.constants import in_progress_key_prefix, job_key_prefix, retry_key_prefix
from arq.worker import Worker, func

from bot.redis import keys
from worker.claims import Claim, Claims, session_of

SESSION = "tg:-100123:7"  # a forum topic's session: colons inside
JOB_ID = keys.wake_job_id(SESSION, 3)


@pytest.fixture
async def pool(redis_url: str) -> AsyncIterator[ArqRedis]:
    pool = await create_pool(RedisSettings.from_dsn(redis_url))
    yield pool
    await pool.aclose()


async def arq_runs(pool: ArqRedis) -> list[str]:
    """The sessions arq's own worker wakes when it polls the queue now; a job it started and
    could not run (its data gone) counts as an empty string."""
    woken: list[str] = []

    async def drain(ctx: dict[str, Any], session: str) -> None:
        assert ctx["redis"] is pool
        woken.append(session)

    worker = Worker(
        functions=[func(drain, name=keys.WAKE_SESSION_JOB)],
        redis_pool=pool,
        burst=True,
        poll_delay=0.01,
        handle_signals=False,
    )
    await worker.main()
    return woken + [""] * worker.jobs_failed


def test_the_session_is_read_from_a_message_drain_job_id() -> None:
    assert session_of(JOB_ID) == SESSION
    assert session_of("3f2a9c0e7b2d4c51") is None  # a hand-back's id, made by arq
    assert session_of(f"{keys.EXPIRY_JOB}:c1") is None
    assert session_of(f"{keys.WAKE_SESSION_JOB}:{SESSION}:x") is None


async def test_a_claimed_job_is_this_workers_and_arq_never_runs_it(pool: ArqRedis) -> None:
    assert await pool.enqueue_job(keys.WAKE_SESSION_JOB, SESSION, _job_id=JOB_ID) is not None
    claims = Claims(pool)
    assert await claims.claim(JOB_ID) == (Claim.TAKEN, SESSION)
    assert await claims.claim(JOB_ID) == (Claim.GONE, SESSION)  # another worker's ring
    assert await arq_runs(pool) == []
    left = [job_key_prefix + JOB_ID, retry_key_prefix + JOB_ID]
    assert await pool.zcard("arq:queue") == 0 and await pool.exists(*left) == 0


async def test_a_job_arq_already_started_is_not_claimed(pool: ArqRedis) -> None:
    assert await pool.enqueue_job(keys.WAKE_SESSION_JOB, SESSION, _job_id=JOB_ID) is not None
    await pool.psetex(in_progress_key_prefix + JOB_ID, 60_000, b"1")
    assert await Claims(pool).claim(JOB_ID) == (Claim.GONE, SESSION)
    assert await pool.zscore("arq:queue", JOB_ID) is not None  # still arq's


async def test_a_deferred_job_is_left_for_its_time(pool: ArqRedis) -> None:
    later = await pool.enqueue_job(keys.WAKE_SESSION_JOB, SESSION, _job_id=JOB_ID, _defer_by=60)
    assert later is not None
    assert await Claims(pool).claim(JOB_ID) == (Claim.GONE, SESSION)
    assert await pool.zscore("arq:queue", JOB_ID) is not None


async def test_a_hand_back_is_started_by_arq(pool: ArqRedis) -> None:
    job = await pool.enqueue_job(keys.WAKE_SESSION_JOB, SESSION)
    assert job is not None
    assert await Claims(pool).claim(job.job_id) == (Claim.ARQ, None)
    assert await arq_runs(pool) == [SESSION]
