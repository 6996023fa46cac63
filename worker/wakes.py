"""Enqueuing on arq's queue: a drain job made for the mailbox to enqueue with the message it
wakes for (`QueueJobs`), and a session woken whose drain job arq still marks as running after
its worker lost it (`Wakes`).

A drain job only hands its session to the supervisor and ends within milliseconds. A worker
that loses Redis in that moment (Redis restarting) or is killed in it never tells arq that the
job finished: the job stays in the queue with its in-progress mark, which arq lets lapse only
after the longest timeout of all the worker's jobs plus 10 s (610 s, the retention prune's).
Until then arq refuses that job id again, so the sweep's re-wake of the session, made with the
same id, is refused too, and its messages would wait ten minutes.

So a worker enqueues through `Wakes`. When arq refuses a drain job because it exists, and its
in-progress mark was set more than `STUCK_S` ago, the mark is lifted in one step with the check:
the job, still in its place in the queue, is started at once by a worker with room (it is rung
for) as its next try. Lifting a live job's mark would at worst run it twice, which the lease
makes harmless.
"""

from __future__ import annotations

from typing import Any

from arq.connections import ArqRedis
from arq.constants import in_progress_key_prefix, job_key_prefix, result_key_prefix
from arq.jobs import Job, serialize_job
from arq.utils import timestamp_ms

from bot.mailbox.inbox import DrainJob
from bot.redis import keys

STUCK_S = 10.0  # a drain job marked running for this long is not running anywhere

# KEYS[1]: the job's in-progress mark. ARGV: the mark's full TTL and the age past which it is
# stale, both in ms. Its age is how much of its TTL has gone.
_LIFT_STALE = """
local left = redis.call('PTTL', KEYS[1])
if left > 0 and tonumber(ARGV[1]) - left > tonumber(ARGV[2]) then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class QueueJobs:
    """arq's queue as a mailbox enqueues on it: jobs by name, and a session's drain job made
    in arq's own format (its job, its place in the queue), which `Mailbox.submit` enqueues
    and rings for in the same Lua call that takes the message in, where arq's enqueue took
    three round trips more (a WATCH, a check, the transaction) and the ring a fourth."""

    def __init__(self, redis: ArqRedis) -> None:
        self.redis = redis

    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> Job | None:
        return await self.redis.enqueue_job(function, *args, **kwargs)

    def drain_job(self, session: str) -> DrainJob:
        now = timestamp_ms()
        payload = serialize_job(
            keys.WAKE_SESSION_JOB, (session,), {}, None, now, serializer=self.redis.job_serializer
        )
        return DrainJob(
            job_key_prefix, result_key_prefix, self.redis.default_queue_name, payload,
            self.redis.expires_extra_ms, now,
        )  # fmt: skip


class Wakes(QueueJobs):
    """The worker mailbox's way to enqueue jobs: arq's, lifting a drain job's stale mark."""

    def __init__(self, redis: ArqRedis, in_progress_s: float) -> None:
        """`in_progress_s`: the TTL arq's worker gives an in-progress mark
        (`Worker.in_progress_timeout_s`)."""
        super().__init__(redis)
        self.in_progress_ms = int(in_progress_s * 1000)
        self._lift = redis.register_script(_LIFT_STALE)

    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> Job | None:
        job = await self.redis.enqueue_job(function, *args, **kwargs)
        job_id = kwargs.get("_job_id")
        if job is not None or function != keys.WAKE_SESSION_JOB or not isinstance(job_id, str):
            return job
        lifted = await self._lift(
            keys=[in_progress_key_prefix + job_id],
            args=[self.in_progress_ms, int(STUCK_S * 1000)],
        )
        return Job(job_id, self.redis) if lifted else None
