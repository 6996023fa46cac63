"""A rung worker claims a new message's drain job from arq's queue and runs it itself.

A message's wake-up is an arq job, and its id is rung on `keys.JOBS_CHANNEL` so that a worker
with room starts it at once. Started through arq, that job costs six round trips to Redis
before the session is even looked at (arq's watched transaction that marks it running, the
read of its pickled call and its try count, the clean-up after it) and arq's own bookkeeping
on the event loop, for a job that only hands a session to the supervisor. So the worker that
hears the ring claims the job in one Lua call instead: the job leaves arq's queue, its data
and try count go, and the worker hands the session to its supervisor as the job would.

arq itself may be starting the same job at that moment (another worker's poll): the claim
refuses a job arq already marks as running, and sets that mark for a second itself, which
arq's transaction watches, so arq's start is refused in turn. Either one of them runs it, or
the claim finds it gone; a job whose id names no session (a hand-back made when a worker was
full) is left to arq. Spurious wake-ups stay harmless: the session's lease decides who works.
"""

from __future__ import annotations

from enum import Enum

from arq.constants import (
    default_queue_name,
    in_progress_key_prefix,
    job_key_prefix,
    retry_key_prefix,
)
from arq.utils import timestamp_ms
from redis.asyncio import Redis

from bot.redis import keys

MARK_MS = 1000  # how long the claim's running mark stays: long past arq's racing transaction

# KEYS: arq's queue, the job's data, its running mark, its try count. ARGV: the job id, now
# (ms), the mark's TTL (ms). 1: claimed; 0: running, not due, or gone.
_CLAIM = """
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local due = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not due or tonumber(due) > tonumber(ARGV[2]) then return 0 end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2], KEYS[4])
redis.call('SET', KEYS[3], '1', 'PX', ARGV[3])
return 1
"""


class Claim(Enum):
    TAKEN = "taken"  # this worker runs it
    GONE = "gone"  # running elsewhere, already run, or not due yet
    ARQ = "arq"  # not a drain job of a message: arq starts it


def session_of(job_id: str) -> str | None:
    """The session a message's drain job wakes, from its id (`keys.wake_job_id`)."""
    name, _, rest = job_id.partition(":")
    session, _, generation = rest.rpartition(":")
    if name != keys.WAKE_SESSION_JOB or not session or not generation.isdigit():
        return None
    return session


class Claims:
    """The claim of rung drain jobs, on one Redis client."""

    def __init__(self, redis: Redis, queue: str = default_queue_name) -> None:
        self._claim = redis.register_script(_CLAIM)
        self.queue = queue

    async def claim(self, job_id: str) -> tuple[Claim, str | None]:
        """Whether this worker now runs `job_id`, and the session it wakes."""
        session = session_of(job_id)
        if session is None:
            return Claim.ARQ, None
        claimed = await self._claim(
            keys=[
                self.queue,
                job_key_prefix + job_id,
                in_progress_key_prefix + job_id,
                retry_key_prefix + job_id,
            ],
            args=[job_id, timestamp_ms(), MARK_MS],
        )
        return (Claim.TAKEN if claimed else Claim.GONE), session
