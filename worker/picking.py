"""Whether a worker takes jobs from arq, the queue read the moment it has room again, and a
drain job rung for taken without arq's bookkeeping.

A worker learns of new work when it is rung (`keys.JOBS_CHANNEL`, see `worker.loops.listen`),
not from arq's poll, which is only the backstop (PARLEY_POLL_DELAY, a second): a deployment
at rest then asks Redis nothing many times a second. A full worker stops taking jobs and
ignores the rings meanwhile, and its wake-ups wait in arq's queue; so the moment one of its
turns ends and it has room again, it reads the queue itself, as a poll would, instead of
leaving those messages for the next poll.

A drain job rung for is taken by the first worker with room that hears it, in one call
(`Rings.claim`): the job leaves arq's queue and its keys go, as arq's own start and finish of
it would leave them. Through arq the same job cost six round trips (its in-progress mark set
under a WATCH, the job read and its try counted, then all of it deleted) for a job that only
hands a session to the supervisor. A job that arq's poll started first (marked in progress)
is left to it; one that another worker claimed is gone from the queue; and the claim touches
the job's in-progress mark, so a poll that looked at the job a moment before fails its
transaction instead of starting it too. Other jobs, and drain jobs read from the queue (a
poll, a worker that has room again), still go through arq.
"""

from __future__ import annotations

import asyncio
import logging

from arq.connections import ArqRedis
from arq.constants import in_progress_key_prefix, job_key_prefix, retry_key_prefix
from arq.utils import timestamp_ms
from arq.worker import Worker

from bot.redis import keys

log = logging.getLogger(__name__)


class Picking:
    """`Supervisor.picking` for one arq worker: says whether it takes jobs, and starts the
    jobs already due when it goes from full to having room."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self._reads: set[asyncio.Task[None]] = set()

    def __call__(self, allowed: bool) -> None:
        regained = allowed and not self.worker.allow_pick_jobs
        self.worker.allow_pick_jobs = allowed
        if regained:
            read = asyncio.create_task(self._take_waiting())
            self._reads.add(read)
            read.add_done_callback(self._reads.discard)

    async def _take_waiting(self) -> None:
        """The due jobs at the head of the queue, as many as there is room for, started as
        arq's poll starts them (its in-progress key lets one worker have each)."""
        worker = self.worker
        room = min(worker.max_jobs - worker.job_counter, worker.queue_read_limit)
        if room <= 0:
            return
        try:
            due = await worker.pool.zrangebyscore(
                worker.queue_name, min=float("-inf"), max=timestamp_ms(), start=0, num=room
            )
            await worker.start_jobs(due)
        except Exception:  # Redis away: arq's poll, or the sweep, brings them later
            log.warning("could not read the queue when room came back", exc_info=True)

    async def aclose(self) -> None:
        """Cancel a read still on its way (the worker is stopping)."""
        for read in list(self._reads):
            read.cancel()
        await asyncio.gather(*self._reads, return_exceptions=True)


# KEYS: arq's queue, the job's in-progress mark, the job, its tries; ARGV[1]: the job's id.
_CLAIM = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('DEL', KEYS[3], KEYS[4])
redis.call('SET', KEYS[2], '1', 'PX', 100)
return 1
"""


def rung_session(job_id: str) -> str | None:
    """The session a drain job's id names (`keys.wake_job_id`), or None for any other id."""
    prefix = keys.WAKE_SESSION_JOB + ":"
    session, _, generation = job_id.removeprefix(prefix).rpartition(":")
    if not job_id.startswith(prefix) or not session or not generation.isdigit():
        return None
    return session


class Rings:
    """Drain jobs rung for, taken out of arq's queue by the worker that heard them."""

    def __init__(self, redis: ArqRedis, queue: str) -> None:
        self.queue = queue
        self._claim = redis.register_script(_CLAIM)

    async def claim(self, job_id: str) -> bool:
        """Whether this worker has the job now: nobody started it, and it is out of the
        queue; its keys are gone as if arq had run it."""
        names = (in_progress_key_prefix, job_key_prefix, retry_key_prefix)
        claimed = await self._claim(
            keys=[self.queue, *(prefix + job_id for prefix in names)], args=[job_id]
        )
        return bool(claimed)
