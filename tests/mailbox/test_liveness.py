"""Liveness keys and the sweep that frees a dead worker's leases, on a real Redis."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from redis.asyncio import Redis

from bot.mailbox.inbox import LeaseLost, Mailbox
from bot.mailbox.liveness import Liveness
from bot.mailbox.saved_state import StateWrite
from bot.redis import keys
from bot.vocabulary.envelope import Envelope, Sender
from tests.support.redis_server import RedisServer


class Jobs:
    def __init__(self) -> None:
        self.enqueued: list[str] = []

    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> None:
        self.enqueued.append(args[0])


def envelope(session: str, n: int = 1) -> Envelope:
    return Envelope(id=f"e{n}", session=session, text=f"m{n}", sender=Sender(id="test:u"))


async def script_time(redis: Redis) -> float:
    """Seconds Redis has spent running scripts (what the sweep blocks it for)."""
    stats = await redis.info("commandstats")
    return float(stats.get("cmdstat_evalsha", {}).get("usec", 0)) / 1e6


@pytest.fixture
def redis(redis_client: Redis) -> Redis:
    return redis_client


async def test_the_sweep_frees_only_the_leases_of_workers_whose_key_lapsed(redis: Redis) -> None:
    jobs = Jobs()
    mailbox = Mailbox(redis, jobs)
    alive, dead = Liveness(redis, ttl=30), Liveness(redis, ttl=30)
    await alive.start()
    await dead.start()
    for session in ("test:alive", "test:dead", "test:old"):
        await mailbox.submit(envelope(session))
    kept = await mailbox.take_lease("test:alive", 30, worker=alive.id)
    lost = await mailbox.take_lease("test:dead", 30, worker=dead.id)
    legacy = await mailbox.take_lease("test:old", 30)  # names no worker: only its TTL ends it
    assert kept and lost and legacy
    assert kept.split(":")[1] == alive.id and lost.split(":")[1] == dead.id
    jobs.enqueued.clear()
    assert await mailbox.sweep(grace=60) == []  # everyone is alive
    await redis.delete(dead.key)  # its worker was killed: the key runs out
    assert await mailbox.sweep(grace=60) == ["test:dead"]
    assert jobs.enqueued == ["test:dead"]
    assert await redis.get(keys.session("test:dead", "lease")) is None
    assert await redis.get(keys.session("test:alive", "lease")) == kept.encode()
    assert await redis.get(keys.session("test:old", "lease")) == legacy.encode()
    fresh = await mailbox.take_lease("test:dead", 30, worker=alive.id)
    assert fresh is not None and int(fresh.split(":")[0]) > int(lost.split(":")[0])
    with pytest.raises(LeaseLost):  # the old holder, if it was only paused, is fenced out
        await mailbox.commit(
            "test:dead", lost, [envelope("test:dead")], StateWrite('{"zombie": 1}')
        )
    with pytest.raises(LeaseLost):
        await mailbox.save_state("test:dead", lost, StateWrite('{"zombie": 1}'))
    assert await mailbox.release_if_empty("test:dead", lost) is None
    await mailbox.commit("test:dead", fresh, [envelope("test:dead")], StateWrite("{}"))
    assert await mailbox.pending("test:dead") == 0


async def test_one_sweep_per_interval_runs_across_workers(redis: Redis) -> None:
    mailbox = Mailbox(redis, Jobs())
    await mailbox.submit(envelope("test:a"))
    assert await mailbox.sweep(grace=0, exclusive=0.5) == ["test:a"]
    assert await mailbox.sweep(grace=0, exclusive=0.5) == []  # another worker's turn skipped
    await asyncio.sleep(0.6)
    assert await mailbox.sweep(grace=0, exclusive=0.5) == ["test:a"]


async def test_a_stalled_worker_learns_at_once_that_its_key_lapsed(redis: Redis) -> None:
    liveness = Liveness(redis, ttl=0.6)
    await liveness.start()
    beating = asyncio.create_task(liveness.run())
    try:
        assert await liveness.lapsed(within=0.5) is False  # beats keep the key
        assert await redis.exists(liveness.key)
        await redis.delete(liveness.key)  # as if the worker had been paused past the TTL
        started = time.monotonic()
        assert await liveness.lapsed(within=5) is True
        assert time.monotonic() - started < 1  # the next beat, not the lease heartbeat's 10 s
        assert await redis.exists(liveness.key)  # and it is alive again
    finally:
        beating.cancel()
    await liveness.stop()
    assert not await redis.exists(liveness.key)


async def test_a_worker_that_loses_redis_briefly_keeps_its_leases(
    redis: Redis, redis_server: RedisServer
) -> None:
    """A beat that fails is tried again; the worker's sweep waits a TTL after contact is back,
    so it judges nobody dead before every live worker has refreshed its key."""
    jobs = Jobs()
    mailbox = Mailbox(redis, jobs)
    liveness = Liveness(redis, ttl=1.5)
    await liveness.start()
    await mailbox.submit(envelope("test:blip"))
    token = await mailbox.take_lease("test:blip", 30, worker=liveness.id)
    beating = asyncio.create_task(liveness.run())
    try:
        await asyncio.to_thread(redis_server.stop)
        await asyncio.sleep(0.8)  # beats fail meanwhile
        await asyncio.to_thread(redis_server.start)
        assert not liveness.steady()
        await asyncio.sleep(2 * liveness.ttl)  # past the TTL: only refreshes kept the key
        assert not beating.done()
        assert liveness.steady()
        assert await mailbox.sweep(grace=60) == []
        assert await redis.get(keys.session("test:blip", "lease")) == (token or "").encode()
    finally:
        beating.cancel()


async def test_the_sweep_over_a_thousand_armed_sessions_is_cheap(redis: Redis) -> None:
    jobs = Jobs()
    mailbox = Mailbox(redis, jobs)
    alive, dead = Liveness(redis, ttl=30), Liveness(redis, ttl=30)
    await alive.start()
    await dead.start()
    sessions = [f"test:s{n}" for n in range(1000)]
    for n, session in enumerate(sessions):
        await mailbox.submit(envelope(session))
        holder = dead if n % 10 == 0 else alive  # one in ten held by a worker that dies
        await mailbox.take_lease(session, 30, worker=holder.id)
    await redis.delete(dead.key)
    jobs.enqueued.clear()
    timings, busy = [], await script_time(redis)
    for _ in range(5):
        started = time.perf_counter()
        woken = await mailbox.sweep(grace=60)
        timings.append(time.perf_counter() - started)
        if len(timings) == 1:
            assert sorted(woken) == sorted(sessions[::10])
        else:
            assert woken == []
    busy = (await script_time(redis) - busy) / 5
    assert sorted(jobs.enqueued) == sorted(sessions[::10])
    assert await redis.zcard(keys.ARMED_SET) == 1000
    print(
        f"\nsweep of 1000 armed sessions (100 leases freed, 100 jobs enqueued): "
        f"{timings[0] * 1000:.1f} ms; with nothing to free: "
        f"{min(timings[1:]) * 1000:.1f}-{max(timings[1:]) * 1000:.1f} ms, in pages of 500; "
        f"Redis busy {busy * 1000:.1f} ms per sweep on average"
    )
    assert max(timings) < 5  # generous: it is a few milliseconds


async def test_a_worker_behind_on_its_key_keeps_its_leases_in_its_own_sweep(
    redis: Redis,
) -> None:
    """Its key lapsed because its event loop fell behind, not because it died: sweeping, it
    is plainly alive, so its own sweep leaves its turns running; another worker's sweep, which
    cannot tell a stall from a death, frees them."""
    mailbox = Mailbox(redis, Jobs())
    behind, other = Liveness(redis, ttl=30), Liveness(redis, ttl=30)
    await behind.start()
    await other.start()
    await mailbox.submit(envelope("test:busy"))
    token = await mailbox.take_lease("test:busy", 30, worker=behind.id)
    await redis.delete(behind.key)
    assert await mailbox.sweep(grace=60, sweeper=behind.id) == []
    assert await redis.get(keys.session("test:busy", "lease")) == str(token).encode()
    assert await mailbox.sweep(grace=60, sweeper=other.id) == ["test:busy"]
