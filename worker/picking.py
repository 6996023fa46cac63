"""Whether a worker takes jobs from arq, and the queue read the moment it has room again.

A worker learns of new work when it is rung (`keys.JOBS_CHANNEL`, see `worker.loops.listen`),
not from arq's poll, which is only the backstop (PARLEY_POLL_DELAY, a second): a deployment
at rest then asks Redis nothing many times a second. A full worker stops taking jobs and
ignores the rings meanwhile, and its wake-ups wait in arq's queue; so the moment one of its
turns ends and it has room again, it reads the queue itself, as a poll would, instead of
leaving those messages for the next poll.
"""

from __future__ import annotations

import asyncio
import logging

from arq.utils import timestamp_ms
from arq.worker import Worker

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
