"""Session mailboxes in Redis: nothing lost, nothing twice, in order, one turn at a time.

The protocol (see the design notes on the mailbox): an envelope is recorded for dedup and
appended to its session's inbox in one Lua call, which also "arms" the session and returns a
generation number; an arq job `drain(session, generation)` then wakes a worker. Jobs carry no
message data. A worker takes the session's lease (token `fence:worker:nonce`, TTL renewed by a
heartbeat) together with the head of its inbox (the head's tries counted in the same step),
runs the turn, and commits (saves state and removes the head) in one Lua call that checks the
lease is still its own and brings the next turn's head, or, when none waits, releases the
lease. Releasing is atomic with the emptiness check, so a message that arrives during release
always finds the session unarmed and enqueues a new job.

A dead holder is noticed in seconds, not after the lease's TTL: the token names the worker
that took it, each worker keeps a short-lived liveness key (`bot.mailbox.liveness`), and the
sweep, one Lua call per page of the armed set, deletes a lease whose worker key is gone (the
check and the delete are one atomic step, so a worker that is alive keeps its lease) and wakes
the session.
The same sweep re-wakes armed sessions nobody holds (a lost wake-up). The lease's own TTL stays
as the backstop for tokens that name no worker. A holder that was only paused and wakes up
after its lease was freed is fenced out: its token no longer matches, so every save, commit and
release of it is refused.

The sweep reads the keys of many sessions in one script. That is fine on one Redis (with or
without replicas); a Redis Cluster would need the sweep split per slot.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from redis.asyncio import Redis
from redis.commands.core import AsyncScript

from bot.mailbox.saved_state import (
    WRITE_STATE,
    ContextMissing,
    FirstItems,
    RedisState,
    StateWrite,
    StoredState,
    TurnOptions,
)
from bot.redis import keys
from bot.redis.results import done, text
from bot.vocabulary.chats import HELPER_MARK, chat_of
from bot.vocabulary.envelope import Envelope

log = logging.getLogger(__name__)
DEAD_LETTER_LIMIT = 1000

# -1 for an envelope seen already; else {generation, rung}. Given a drain job (ARGV[5] on:
# its id before the generation, the keys' prefixes, the queue, TTL, payload, score and the
# channel), it is enqueued as the job queue would enqueue it (not while that id has a job or
# a result) and rung for, in the same step: rung is 1. Else the caller wakes a worker.
_INGEST = """
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[2]) == false then return -1 end
redis.call('RPUSH', KEYS[2], ARGV[1])
local g = redis.call('GET', KEYS[3])
if not g then
  g = redis.call('INCR', KEYS[4])
  redis.call('SET', KEYS[3], g)
  redis.call('ZADD', KEYS[5], ARGV[4], ARGV[3])
end
if ARGV[5] == nil then return {tonumber(g), 0} end
local id = ARGV[5] .. g
if redis.call('EXISTS', ARGV[6] .. id, ARGV[7] .. id) > 0 then return {tonumber(g), 0} end
redis.call('PSETEX', ARGV[6] .. id, ARGV[9], ARGV[10])
redis.call('ZADD', ARGV[8], ARGV[11], id)
redis.call('PUBLISH', ARGV[12], id)
return {tonumber(g), 1}
"""
_TAKE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local token = redis.call('INCR', KEYS[2]) .. ':' .. ARGV[1]
redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
return token
"""
# The next turn's envelopes: the inbox's first `count`, led by how many times the first was
# taken up, this time counted (`Head`); an empty table when none waits.
_HEAD_OF = """
local function head_of(inbox, attempts, count, ttl)
  local batch = redis.call('LRANGE', inbox, 0, count - 1)
  if #batch == 0 then return batch end
  local tried = attempts .. cjson.decode(batch[1])['id']
  local tries = redis.call('INCR', tried)
  redis.call('EXPIRE', tried, ttl)
  table.insert(batch, 1, tries)
  return batch
end
"""
# The lease and the first turn's head in one step: {token, tries, envelopes...}; false while
# someone holds it. When nothing waits, nothing is taken and the session is disarmed, as a
# lease taken and released at once would leave it ({}).
_TAKE_TURN = (
    _HEAD_OF
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local head = head_of(KEYS[3], ARGV[4], tonumber(ARGV[3]), ARGV[5])
if #head == 0 then
  redis.call('DEL', KEYS[4])
  redis.call('ZREM', KEYS[5], ARGV[6])
  return head
end
local token = redis.call('INCR', KEYS[2]) .. ':' .. ARGV[1]
redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
table.insert(head, 1, token)
return head
"""
)
# The lease only while nothing is queued or armed there either, in the same step: retention's
# cut of a live context (`bot.session.retention`) never makes a waiting message wait longer.
_TAKE_IDLE = (
    """
if redis.call('EXISTS', KEYS[3]) == 1 or redis.call('LLEN', KEYS[4]) > 0 then return false end
"""
    + _TAKE
)
_EXTEND = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""
# The turn's state saved and its envelopes taken off the inbox, under the lease. With a
# positive ARGV[4], the next turn's head is read in the same step ({1, tries, envelopes...}),
# or, when none waits, the lease is released ({1}): atomic with the emptiness check, as
# `_RELEASE_IF_EMPTY` is.
_COMMIT = (
    WRITE_STATE
    + _HEAD_OF
    + """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local head = redis.call('LINDEX', KEYS[2], 0)
if not head or cjson.decode(head)['id'] ~= ARGV[3] then return -1 end
if ARGV[8] ~= '' then
  local drop, keep = tonumber(ARGV[9]), tonumber(ARGV[10])
  if not write_state(KEYS[3], KEYS[5], KEYS[6], ARGV[8], drop, keep, ARGV[11], 12) then
    return -2
  end
end
redis.call('LTRIM', KEYS[2], tonumber(ARGV[2]), -1)
redis.call('DEL', KEYS[4])
if tonumber(ARGV[4]) == 0 then return {1} end
local next = head_of(KEYS[2], ARGV[5], tonumber(ARGV[4]), ARGV[6])
if #next == 0 then
  redis.call('DEL', KEYS[1], KEYS[7])
  redis.call('ZREM', KEYS[8], ARGV[7])
end
table.insert(next, 1, 1)
return next
"""
)
_RELEASE_IF_EMPTY = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('LLEN', KEYS[2]) > 0 then return 0 end
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[2])
return 1
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
"""
# Forget a session only if nothing is queued or running there, in the same step as the check:
# a message submitted a moment before is never deleted with the rest.
_FORGET_IDLE = """
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
if redis.call('LLEN', KEYS[2]) > 0 then return -1 end
local gone = 0
for i = 4, #KEYS, 1000 do
  gone = gone + redis.call('DEL', unpack(KEYS, i, math.min(i + 999, #KEYS)))
end
return gone
"""
_DROP_DEAD = """
local gone = 0
for _, entry in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if string.find(entry, ARGV[1], 1, true) then
    gone = gone + redis.call('LREM', KEYS[1], 1, entry)
  end
end
return gone
"""
# One page of the armed set (ZSCAN: a score changed meanwhile never makes it skip a session).
# A lease whose token names a worker (`fence:worker:nonce`) whose liveness key is gone is
# deleted; the GET, the EXISTS and the DEL run as one step, so no live holder loses its lease.
# A session with no lease is re-woken once its score (armed or last woken) is past the grace.
# Each woken session is restamped, so the next sweeps leave it to the drain job just queued.
# On the first page, a positive ARGV[4] lets one sweeper run per that many ms across workers.
_SWEEP = """
if ARGV[1] == '0' and tonumber(ARGV[4]) > 0 then
  if not redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[4]) then return {'0', {}, {}} end
end
local page = redis.call('ZSCAN', KEYS[1], ARGV[1], 'COUNT', ARGV[5])
local cutoff = tonumber(ARGV[2]) - tonumber(ARGV[3])
local woken, freed, items = {}, {}, page[2]
for i = 1, #items, 2 do
  local session, wake = items[i], false
  local lease = ARGV[6] .. '{' .. session .. '}:lease'
  local token = redis.call('GET', lease)
  if token then
    local worker = string.match(token, '^%d+:(%x+):%x+$')
    if worker and worker ~= ARGV[8] and redis.call('EXISTS', ARGV[7] .. worker) == 0 then
      redis.call('DEL', lease)
      freed[#freed + 1] = session
      wake = true
    end
  elseif tonumber(items[i + 1]) <= cutoff then
    wake = true
  end
  if wake then
    redis.call('ZADD', KEYS[1], 'XX', ARGV[2], session)
    woken[#woken + 1] = session
    woken[#woken + 1] = redis.call('GET', ARGV[6] .. '{' .. session .. '}:armed') or ''
  end
end
return {page[1], woken, freed}
"""


class Enqueuer(Protocol):
    """The one thing the mailbox needs from arq: enqueue a job by name."""

    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> Any: ...


@dataclass(frozen=True)
class DrainJob:
    """A session's drain job as the job queue keeps it (`keys.WAKE_SESSION_JOB`, the
    session its one argument), for `Mailbox.submit` to enqueue and ring for in the same Lua
    call that takes the envelope in: a job's key is `key_prefix` and its id, its result's
    `result_prefix` and its id; `payload` is kept `ttl_ms`, in `queue` at `score`."""

    key_prefix: str
    result_prefix: str
    queue: str
    payload: bytes
    ttl_ms: int
    score: int


@runtime_checkable
class DrainJobs(Enqueuer, Protocol):
    """An enqueuer that also makes a session's drain job for `submit` to enqueue itself."""

    def drain_job(self, session: str) -> DrainJob: ...


@dataclass(frozen=True)
class Head:
    """The envelopes at the head of a session's inbox that the next turn takes (at most the
    count asked for), and how many times the first of them was taken up, this time counted:
    the count survives worker crashes, so an envelope that keeps crashing workers is noticed
    (`bot.session.runner`)."""

    envelopes: list[Envelope]
    tries: int

    @classmethod
    def of(cls, items: Sequence[Any]) -> Head:
        """From a script's answer: the count, then the envelopes' JSON."""
        return cls([Envelope.model_validate_json(item) for item in items[1:]], int(items[0]))


@dataclass(frozen=True)
class Submitted:
    accepted: bool
    generation: int | None = None

    @property
    def duplicate(self) -> bool:
        return not self.accepted


class LeaseLost(Exception):
    """Another worker holds the session now; whatever this one was doing must stop."""


class Mailbox:
    def __init__(self, redis: Redis, jobs: Enqueuer, *, dedup_ttl: int = 86_400) -> None:
        self.redis = redis
        self.jobs = jobs
        self.dedup_ttl = dedup_ttl
        self._ingest = redis.register_script(_INGEST)
        self._take = redis.register_script(_TAKE)
        self._take_idle = redis.register_script(_TAKE_IDLE)
        self._take_turn = redis.register_script(_TAKE_TURN)
        self._extend = redis.register_script(_EXTEND)
        self._state = RedisState(redis)
        self._commit = redis.register_script(_COMMIT)
        self._release_if_empty = redis.register_script(_RELEASE_IF_EMPTY)
        self._release = redis.register_script(_RELEASE)
        self._sweep = redis.register_script(_SWEEP)
        self._forget_idle = redis.register_script(_FORGET_IDLE)
        self._drop_dead = redis.register_script(_DROP_DEAD)

    async def submit(self, envelope: Envelope) -> Submitted:
        """Record and queue `envelope`, then wake a worker; only then is it safe to ack.
        Where the job queue says how (`DrainJobs`), the drain job is enqueued and rung for in
        the same call; where it could not be (its id's job still queued), as `wake` does."""
        s = envelope.session
        names = (f"seen:{envelope.id}", "inbox", "armed", "gen")
        result = await self._ingest(
            keys=[*(keys.session(s, name) for name in names), keys.ARMED_SET],
            args=[envelope.model_dump_json(), self.dedup_ttl, s, time.time(), *self._job(s)],
        )
        if not isinstance(result, list):
            return Submitted(accepted=False)
        generation, rung = int(result[0]), bool(result[1])
        if not rung:
            await self.wake(s, generation)
        return Submitted(accepted=True, generation=generation)

    def _job(self, session: str) -> list[str | int | bytes]:
        """The ingest's arguments that enqueue the session's drain job, if the job queue
        says how."""
        if not isinstance(self.jobs, DrainJobs):
            return []
        job = self.jobs.drain_job(session)
        return [
            keys.wake_job_prefix(session), job.key_prefix, job.result_prefix, job.queue,
            job.ttl_ms, job.payload, job.score, keys.JOBS_CHANNEL,
        ]  # fmt: skip

    async def wake(self, session: str, generation: int | None = None) -> None:
        """Enqueue a drain job, and ring for it: a worker polling arq's queue would find it
        only at its next poll, tens of milliseconds on average, so its id is published too
        and an idle worker starts it on the spot (see `keys.JOBS_CHANNEL`). Spurious jobs
        are harmless, the lease decides who works."""
        job_id = keys.wake_job_id(session, generation) if generation is not None else None
        job = await self.jobs.enqueue_job(keys.WAKE_SESSION_JOB, session, _job_id=job_id)
        if job is not None:  # None: that generation's job is queued and was rung for already
            await done(self.redis.publish(keys.JOBS_CHANNEL, job.job_id))

    async def peek(self, session: str, count: int = 1, *, start: int = 0) -> list[Envelope]:
        """At most `count` of the envelopes waiting, from position `start` (0: the head)."""
        name = keys.session(session, "inbox")
        raw = await done(self.redis.lrange(name, start, start + count - 1))
        return [Envelope.model_validate_json(item) for item in raw]

    async def pending(self, session: str) -> int:
        return int(await done(self.redis.llen(keys.session(session, "inbox"))))

    async def take_lease(self, session: str, ttl: float, *, worker: str = "") -> str | None:
        """The lease, or None if someone holds it. A token naming `worker` (its liveness id,
        see `bot.mailbox.liveness`) is freed by the sweep soon after that worker's key lapses; one
        with no worker only ends with its TTL."""
        return await self._leased(self._take, session, ttl, worker)

    async def take_turn(
        self, session: str, ttl: float, count: int, *, worker: str = ""
    ) -> tuple[str, Head] | None:
        """`take_lease` and the first turn's `Head` (at most `count` envelopes), in one step;
        None while someone holds the lease, and when nothing waits (nothing is taken then,
        and the session is disarmed, as `release_if_empty` would)."""
        tail = f"{worker}:{uuid.uuid4().hex}" if worker else uuid.uuid4().hex
        names = ("lease", "fence", "inbox", "armed")
        taken = await self._take_turn(
            keys=[*(keys.session(session, name) for name in names), keys.ARMED_SET],
            args=[tail, int(ttl * 1000), count, keys.session(session, "attempts:"),
                  self.dedup_ttl, session],
        )  # fmt: skip
        if not taken:
            return None
        return text(taken[0]), Head.of(taken[1:])

    async def take_idle_lease(self, session: str, ttl: float, *, worker: str = "") -> str | None:
        """`take_lease`, only when no turn runs in `session` and no message waits there,
        checked in the same step; else None. Whoever holds it must hand over to a message
        that comes meanwhile (`release_if_empty`, else `release` and `wake`)."""
        busy = (keys.session(session, "armed"), keys.session(session, "inbox"))
        return await self._leased(self._take_idle, session, ttl, worker, busy)

    async def _leased(
        self, script: AsyncScript, session: str, ttl: float, worker: str, more: Sequence[str] = ()
    ) -> str | None:
        """A lease token from `script` (given the lease, the fence, then `more` keys), or None."""
        nonce = uuid.uuid4().hex
        tail = f"{worker}:{nonce}" if worker else nonce
        token = await script(
            keys=[keys.session(session, "lease"), keys.session(session, "fence"), *more],
            args=[tail, int(ttl * 1000)],
        )
        return token.decode() if isinstance(token, bytes) else token

    async def extend(self, session: str, token: str, ttl: float) -> bool:
        return bool(
            await self._extend(keys=[keys.session(session, "lease")], args=[token, int(ttl * 1000)])
        )

    async def save_state(self, session: str, token: str, write: StateWrite) -> None:
        """Write the session's state only while holding its lease (the fence)."""
        result = await self._state.save(session, token, write)
        if result == 0:
            raise LeaseLost(session)
        if result < 0:
            raise ContextMissing(session)

    async def load_state(self, session: str, known: str = "") -> StoredState | None:
        """The session's state as Redis holds it (`RedisState.load`)."""
        return await self._state.load(session, known)

    async def load_for_turn(
        self, session: str, known: str = ""
    ) -> tuple[StoredState | None, TurnOptions]:
        """`load_state` with the options the turn runs with, in one round trip: the
        session's model, its chat's mode, reasoning, tools and output schema (`chat_of`: a
        topic's or a thread's are its chat's; `RedisState.load_for_turn`)."""
        return await self._state.load_for_turn(session, chat_of(session), known)

    async def first_of_state(self, session: str, count: int) -> FirstItems | None:
        """The start of the session's state, without its context (`RedisState.first`)."""
        return await self._state.first(session, count)

    async def commit(
        self,
        session: str,
        token: str,
        envelopes: Sequence[Envelope],
        write: StateWrite | None = None,
        *,
        then: int = 0,
    ) -> Head | None:
        """Save the state and remove `envelopes` from the head, atomically, under the lease.
        With `then`, also take the next turn's `Head` (at most `then` envelopes) in the same
        step, or release the lease when none waits (None), as `release_if_empty` does: its
        holder stops extending it first (see `bot.session.lease`). Without, None."""
        state: list[str | int] = [""] if write is None else write.args()
        names = ("lease", "inbox", "state", f"attempts:{envelopes[0].id}", "context", "saved")
        result = await self._commit(
            keys=[
                *(keys.session(session, name) for name in names),
                keys.session(session, "armed"),
                keys.ARMED_SET,
            ],
            args=[
                token, len(envelopes), envelopes[0].id, then, keys.session(session, "attempts:"),
                self.dedup_ttl, session, *state,
            ],
        )  # fmt: skip
        if isinstance(result, list):
            return Head.of(result[1:]) if len(result) > 1 else None
        if result == 0:
            raise LeaseLost(session)
        if result == -2:
            raise ContextMissing(session)
        raise RuntimeError(f"inbox head of {session} is not {envelopes[0].id}")

    async def release_if_empty(self, session: str, token: str) -> bool | None:
        """True: released; False: messages are waiting, take another turn; None: lease lost."""
        result = await self._release_if_empty(
            keys=[
                keys.session(session, "lease"),
                keys.session(session, "inbox"),
                keys.session(session, "armed"),
                keys.ARMED_SET,
            ],
            args=[token, session],
        )
        return None if result < 0 else bool(result)

    async def release(self, session: str, token: str) -> None:
        """Give the lease up with work left (shutdown, failure): someone else resumes it."""
        await self._release(keys=[keys.session(session, "lease")], args=[token])

    async def sweep(
        self, grace: float, *, exclusive: float = 0, page: int = 500, sweeper: str = ""
    ) -> list[str]:
        """Free the leases of dead workers and wake their sessions; re-wake armed sessions that
        nobody holds and that have waited past `grace`. Returns the sessions woken.

        A session is woken with its armed generation's job id: arq refuses it while that job
        is still queued (a worker too busy to start it within `grace` gets no second one
        to start), and takes it once the job is gone (run, or never enqueued).

        `sweeper` is the liveness id of the worker sweeping: it never frees its own leases,
        since it is alive to sweep; its key lapsing only means its event loop fell behind
        (hundreds of turns ending at once), and its turns go on.

        With `exclusive` > 0 at most one sweep starts per that many seconds across all
        workers: each runs a sweep loop, but one scan of the armed set per interval is enough.
        The armed set is read `page` sessions per Lua call, so Redis is never held long."""
        now = time.time()
        cursor, freed = "0", []
        woken: dict[str, int | None] = {}  # keeps order without repeats (ZSCAN may repeat)
        while True:
            result = await self._sweep(
                keys=[keys.ARMED_SET, keys.SWEEPER],
                args=[
                    cursor,
                    now,
                    grace,
                    int(exclusive * 1000),
                    page,
                    keys.SESSION_PREFIX,
                    keys.WORKER_PREFIX,
                    sweeper,
                ],
            )
            cursor = text(result[0])
            pairs = [text(item) for item in result[1]]
            for session, armed in zip(pairs[::2], pairs[1::2], strict=True):
                woken[session] = int(armed) if armed else None
            freed += [text(s) for s in result[2]]
            if cursor == "0":
                break
        if freed:
            log.warning("freed %d leases of workers that stopped: %s", len(freed), freed[:10])
        for session, generation in woken.items():
            await self.wake(session, generation)
        return list(woken)

    async def option(self, session: str, name: str) -> str | None:
        """A per-session setting chosen by a person (e.g. `model`), or None for the default."""
        value = await done(self.redis.hget(keys.session(session, "options"), name))
        return value.decode() if isinstance(value, bytes) else None

    async def options(self, session: str, *names: str) -> list[str | None]:
        """Several of `option`, in one round trip."""
        values = await done(self.redis.hmget(keys.session(session, "options"), list(names)))
        return [value.decode() if isinstance(value, bytes) else None for value in values]

    async def set_option(self, session: str, name: str, value: str | None) -> None:
        if value is None:
            await done(self.redis.hdel(keys.session(session, "options"), name))
        else:
            await done(self.redis.hset(keys.session(session, "options"), name, value))

    async def stop(self, session: str) -> bool:
        """Ask every worker to cancel `session`'s running turn; True if one holds it."""
        await self.redis.publish(keys.CANCEL_CHANNEL, session)
        return await self.busy(session)

    async def forget(self, session: str) -> int:
        """Delete everything Redis holds for `session` (state, inbox, options, events); the
        caller makes sure no turn runs there. Returns how many keys went."""
        names = await self._names(session)
        if names:
            await self.redis.delete(*names)
        await done(self.redis.zrem(keys.ARMED_SET, session))
        await self._forget_dead_letters(session)
        return len(names)

    async def forget_idle(self, session: str) -> int | None:
        """`forget`, only if nothing is queued or running in `session`, checked in the same
        step as the delete (retention: a message that just arrived is never lost). None
        when the session is busy; else how many keys went."""
        names = await self._names(session)
        busy = [keys.session(session, name) for name in ("lease", "inbox", "armed")]
        forgotten = int(await self._forget_idle(keys=[*busy, *names]))
        if forgotten < 0:
            return None
        await self._forget_dead_letters(session)
        return forgotten

    async def _names(self, session: str) -> list[Any]:
        """The session's keys, and its helpers' (`bot.vocabulary.helpers`): they go with it."""
        escaped = re.sub(r"([*?\[\]\\])", r"\\\1", session)
        names = []
        for pattern in (keys.session(escaped, "*"), keys.session(f"{escaped}{HELPER_MARK}*", "*")):
            names += [name async for name in self.redis.scan_iter(match=pattern, count=500)]
        return names

    async def busy(self, session: str) -> bool:
        """Whether a worker holds the session's lease (a turn is running)."""
        return bool(await self.redis.exists(keys.session(session, "lease")))

    async def dead_letter(self, envelope: Envelope, reason: str) -> None:
        """Keep `envelope` for an operator, newest first; only the newest
        `DEAD_LETTER_LIMIT` are kept, so messages that crash workers cannot fill Redis."""
        entry = {"envelope": envelope.model_dump(mode="json"), "reason": reason, "at": time.time()}
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.lpush(keys.DEAD_LETTERS, json.dumps(entry))
            pipe.ltrim(keys.DEAD_LETTERS, 0, DEAD_LETTER_LIMIT - 1)
            await pipe.execute()
        # Counted in Redis, not by the process: a counter that outlives every worker, so an
        # alert on its increase never mistakes a worker gone for a counter reset.
        await self.redis.incr(keys.DEAD_LETTER_COUNT)

    async def _forget_dead_letters(self, session: str) -> None:
        """A forgotten session's dead letters go too: they hold its messages' text. Matched
        in Redis by the session as `dead_letter` wrote it, so nothing crosses the network."""
        needle = f'"session": {json.dumps(session)},'
        await self._drop_dead(keys=[keys.DEAD_LETTERS], args=[needle])
