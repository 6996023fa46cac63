"""What a worker runs beside its turns, for as long as it runs: the sweep that frees the
leases of dead workers and re-wakes lost wake-ups, the listener for cancels and new drain
jobs, the watch on the database file and the shared directories, the memories embedded in
the background, and the word that it is ready. Each is a loop `worker.jobs` starts as a task
and cancels when the worker stops.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Mapping

from arq.connections import ArqRedis
from arq.worker import Worker
from redis.asyncio import Redis
from redis.exceptions import RedisError

from adapters.platforms.loading import LoadingEgress
from bot.config.settings import Settings
from bot.files import shared_dirs
from bot.mailbox.inbox import Mailbox
from bot.mailbox.liveness import Liveness
from bot.memory.digest import DailyDigests
from bot.memory.recall import Recall
from bot.redis import keys
from bot.store.database import Database
from worker.claims import Claim, Claims
from worker.ready import announce
from worker.supervisor import Supervisor

log = logging.getLogger(__name__)

WAKE_GRACE = 5.0
CATCH_UP_S = 600.0  # between two looks for memories the embedding model has not embedded
DIGESTS_S = 900.0  # between two looks for days' digests due
DIGESTS_FIRST_S = 10.0  # the first look, once a starting worker has taken its first work
# A busy worker's wait before it claims a rung job: so long per turn it runs, so many at most.
YIELD_S, YIELD_TURNS = 0.0005, 4


async def sweep(settings: Settings, mailbox: Mailbox, liveness: Liveness) -> None:
    """Every worker sweeps, but one sweep per interval runs across them all (`exclusive`).

    A lease whose worker's liveness key is gone is freed at the first sweep, so an idle worker
    takes it within about liveness TTL + sweep interval. An armed session with no holder is
    only re-woken after WAKE_GRACE (or the interval, if longer): its drain job may just be
    queued behind others, and a lost wake-up is rare enough that 5 s is quick."""
    grace = max(WAKE_GRACE, settings.sweep_interval)
    while True:
        await asyncio.sleep(settings.sweep_interval)
        if not liveness.steady():
            continue  # until every live worker has had time to refresh its key again
        try:
            await mailbox.sweep(
                grace=grace, exclusive=settings.sweep_interval * 0.9, sweeper=liveness.id
            )
        except Exception:
            log.warning("sweep failed", exc_info=True)


async def catch_up_memories(recall: Recall, redis: Redis, worker: str) -> None:
    """Embed what the configured model has not, at start and every `CATCH_UP_S`: memories
    kept while it failed, those from before it, all of them after a change of model.
    Recall finds them by their words meanwhile. One worker at a time does (a claim in
    Redis for the pass, let go after it): after a change of model, every worker embedding
    the same memories would multiply the work, not the pace."""
    while True:
        try:
            if await redis.set(keys.EMBEDDING_CLAIM, worker, nx=True, ex=int(CATCH_UP_S)):
                try:
                    if done := await recall.catch_up():
                        log.info("embedded %d memories for recall by meaning", done)
                finally:
                    await redis.delete(keys.EMBEDDING_CLAIM)
        except Exception:  # the model, the database or Redis failing: the next look tries again
            log.warning("could not embed the memories waiting for it", exc_info=True)
        await asyncio.sleep(CATCH_UP_S)


async def write_digests(digests: DailyDigests) -> None:
    """Write the days' digests due, `DIGESTS_FIRST_S` after start and every `DIGESTS_S`."""
    await asyncio.sleep(DIGESTS_FIRST_S)
    while True:
        try:
            if done := await digests.write_due():
                log.info("wrote %d days' digests", done)
        except Exception:  # the database or Redis failing: the next look tries again
            log.warning("could not write the days' digests", exc_info=True)
        await asyncio.sleep(DIGESTS_S)


async def watch_database(settings: Settings, database: Database) -> None:
    """Look at the database file now and then, so a data directory deleted under a quiet
    worker is reported (an ERROR naming the file) before the next turn tries to write."""
    while True:
        await asyncio.sleep(settings.sweep_interval)
        database.problem()


async def watch_shared_dirs(redis: ArqRedis, settings: Settings) -> None:
    """Say at start, and whenever it changes, whether this worker's directories are the
    ones the other processes use (`bot.files.shared_dirs`): an ERROR names each that is not."""
    said: str | None = None
    while True:
        try:
            problem = await shared_dirs.check(redis, settings)
        except (RedisError, OSError):
            problem = said  # Redis away: nothing new to say
        if problem != said:
            if problem is not None:
                log.error("%s", problem)
            else:
                log.info("the shared directories are the other processes' again")
            said = problem
        await asyncio.sleep(shared_dirs.EVERY_S)


async def listen(redis: ArqRedis, supervisor: Supervisor, worker: Worker) -> None:
    """Turns to cancel, and drain jobs just queued (`keys.JOBS_CHANNEL`): one with room
    takes such a job now rather than at its next poll. Every worker hears the id; one claim
    (`worker.claims`) or arq's own check lets exactly one of them run it, and it is the
    least busy one, the first to get to it."""
    claims = Claims(redis, worker.queue_name)
    pubsub = redis.pubsub()
    await pubsub.subscribe(keys.CANCEL_CHANNEL, keys.JOBS_CHANNEL)
    async for message in pubsub.listen():
        if message.get("type") != "message":
            continue
        if message["channel"] == keys.CANCEL_CHANNEL.encode():
            supervisor.runner.cancel(message["data"].decode())
        elif worker.allow_pick_jobs and worker.job_counter < worker.max_jobs:
            try:
                await _take(message["data"], claims, supervisor, worker)
            except (RedisError, OSError) as exc:  # the poll, or the sweep, brings it later
                log.warning("could not take a rung job: %s", exc)


async def _take(job_id: bytes, claims: Claims, supervisor: Supervisor, worker: Worker) -> None:
    """The rung job `job_id`: claimed and its session woken here, or left to arq.

    Redis tells the workers of a ring in the order they subscribed, and a claim is one round
    trip, so the same worker would win every race and take every session while it has
    room. A worker already running turns lets the others try first, a moment per turn it
    runs: the least busy one takes the work."""
    if running := len(supervisor.tasks):
        await asyncio.sleep(min(running, YIELD_TURNS) * YIELD_S)
    claim, session = await claims.claim(job_id.decode())
    if claim is Claim.TAKEN and session is not None:
        await supervisor.wake(session)
    elif claim is Claim.ARQ:
        await worker.start_jobs([job_id])


async def say_ready(
    redis: ArqRedis, liveness: Liveness, platforms: Mapping[str, LoadingEgress]
) -> None:
    """Say so once every configured platform is loaded, in the log and on the workers'
    stream (`worker.ready`). The worker takes work before that (see
    `adapters.platforms.loading`), but a reply opened until then reaches its platform only
    now."""
    loads = (egress.loaded() for egress in platforms.values())
    results = await asyncio.gather(*loads, return_exceptions=True)
    # The platforms' SDKs were imported after start-up moved what it made out of the
    # collector's sight (`worker.cli`): aiogram leaves some 50,000 objects (its modules,
    # classes and functions) that live as long as the process. Left in view, each of the
    # full collections a busy worker makes every hundred turns or so went over all of them
    # again (8 ms quiet, 60 ms and more under load: a pause every reply in flight shares).
    gc.freeze()
    outcomes = zip(platforms, results, strict=True)
    loaded = [name for name, result in outcomes if not isinstance(result, BaseException)]
    log.info("worker %s is ready for %s", liveness.id, ", ".join(["http", *loaded]))
    await announce(redis, liveness.id)
