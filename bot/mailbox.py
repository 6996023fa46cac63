"""Session mailboxes in Redis: nothing lost, nothing twice, in order, one turn at a time.

The protocol (see the design notes on the mailbox): an envelope is recorded for dedup and
appended to its session's inbox in one Lua call, which also "arms" the session and returns a
generation number; an arq job `drain(session, generation)` then wakes a worker. Jobs carry no
message data. A worker takes the session's lease (token `fence:uuid`, TTL renewed by a
heartbeat), peeks the head, runs the turn, and commits (saves state and removes the head) in
one Lua call that checks the lease is still its own. Releasing is atomic with the emptiness
check, so a message that arrives during release always finds the session unarmed and enqueues
a new job. A periodic sweep re-enqueues armed sessions nobody holds, which also recovers a
session whose worker died.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from redis.asyncio import Redis

from bot.envelope import Envelope
from bot.redis_types import done

PREFIX = "parley"
ARMED_SET = f"{PREFIX}:armed"
DEAD_LETTERS = f"{PREFIX}:dead"
CANCEL_CHANNEL = f"{PREFIX}:cancel"

_INGEST = """
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[2]) == false then return -1 end
redis.call('RPUSH', KEYS[2], ARGV[1])
local g = redis.call('GET', KEYS[3])
if not g then
  g = redis.call('INCR', KEYS[4])
  redis.call('SET', KEYS[3], g)
  redis.call('ZADD', KEYS[5], ARGV[4], ARGV[3])
end
return tonumber(g)
"""
_TAKE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return false end
local token = redis.call('INCR', KEYS[2]) .. ':' .. ARGV[1]
redis.call('SET', KEYS[1], token, 'PX', ARGV[2])
return token
"""
_EXTEND = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""
_SAVE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1
"""
_COMMIT = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local head = redis.call('LINDEX', KEYS[2], 0)
if not head or cjson.decode(head)['id'] ~= ARGV[3] then return -1 end
if ARGV[4] ~= '' then redis.call('SET', KEYS[3], ARGV[4]) end
redis.call('LTRIM', KEYS[2], tonumber(ARGV[2]), -1)
redis.call('DEL', KEYS[4])
return 1
"""
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


def key(session: str, name: str) -> str:
    """Keys of one session share a hash tag, so its scripts touch a single slot."""
    return f"{PREFIX}:{{{session}}}:{name}"


class Enqueuer(Protocol):
    """The one thing the mailbox needs from arq: enqueue a job by name."""

    async def enqueue_job(self, function: str, *args: Any, **kwargs: Any) -> Any: ...


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
        self._extend = redis.register_script(_EXTEND)
        self._save = redis.register_script(_SAVE)
        self._commit = redis.register_script(_COMMIT)
        self._release_if_empty = redis.register_script(_RELEASE_IF_EMPTY)
        self._release = redis.register_script(_RELEASE)

    async def submit(self, envelope: Envelope) -> Submitted:
        """Record and queue `envelope`, then wake a worker; only then is it safe to ack."""
        s = envelope.session
        generation = int(
            await self._ingest(
                keys=[
                    key(s, f"seen:{envelope.id}"),
                    key(s, "inbox"),
                    key(s, "armed"),
                    key(s, "gen"),
                    ARMED_SET,
                ],
                args=[envelope.model_dump_json(), self.dedup_ttl, s, time.time()],
            )
        )
        if generation < 0:
            return Submitted(accepted=False)
        await self.wake(s, generation)
        return Submitted(accepted=True, generation=generation)

    async def wake(self, session: str, generation: int | None = None) -> None:
        """Enqueue a drain job; spurious ones are harmless, the lease decides who works."""
        job_id = f"drain:{session}:{generation}" if generation is not None else None
        await self.jobs.enqueue_job("drain", session, _job_id=job_id)

    async def peek(self, session: str, count: int = 1) -> list[Envelope]:
        raw = await done(self.redis.lrange(key(session, "inbox"), 0, count - 1))
        return [Envelope.model_validate_json(item) for item in raw]

    async def pending(self, session: str) -> int:
        return int(await done(self.redis.llen(key(session, "inbox"))))

    async def take_lease(self, session: str, ttl: float) -> str | None:
        token = await self._take(
            keys=[key(session, "lease"), key(session, "fence")],
            args=[uuid.uuid4().hex, int(ttl * 1000)],
        )
        return token.decode() if isinstance(token, bytes) else token

    async def extend(self, session: str, token: str, ttl: float) -> bool:
        return bool(await self._extend(keys=[key(session, "lease")], args=[token, int(ttl * 1000)]))

    async def save_state(self, session: str, token: str, state_json: str) -> None:
        """Write the session's state only while holding its lease (the fence)."""
        done = await self._save(
            keys=[key(session, "lease"), key(session, "state")], args=[token, state_json]
        )
        if not done:
            raise LeaseLost(session)

    async def load_state(self, session: str) -> bytes | None:
        value = await self.redis.get(key(session, "state"))
        return value if isinstance(value, bytes) else None

    async def commit(
        self, session: str, token: str, envelopes: Sequence[Envelope], state_json: str = ""
    ) -> None:
        """Save the state and remove `envelopes` from the head, atomically, under the lease."""
        result = await self._commit(
            keys=[
                key(session, "lease"),
                key(session, "inbox"),
                key(session, "state"),
                key(session, f"attempts:{envelopes[0].id}"),
            ],
            args=[token, len(envelopes), envelopes[0].id, state_json],
        )
        if result == 0:
            raise LeaseLost(session)
        if result < 0:
            raise RuntimeError(f"inbox head of {session} is not {envelopes[0].id}")

    async def release_if_empty(self, session: str, token: str) -> bool | None:
        """True: released; False: messages are waiting, keep draining; None: lease lost."""
        result = await self._release_if_empty(
            keys=[key(session, "lease"), key(session, "inbox"), key(session, "armed"), ARMED_SET],
            args=[token, session],
        )
        return None if result < 0 else bool(result)

    async def release(self, session: str, token: str) -> None:
        """Give the lease up with work left (shutdown, failure): someone else resumes it."""
        await self._release(keys=[key(session, "lease")], args=[token])

    async def sweep(self, grace: float) -> list[str]:
        """Re-wake armed sessions that nobody holds and that have waited past `grace`."""
        now = time.time()
        stale = await self.redis.zrangebyscore(ARMED_SET, "-inf", now - grace)
        woken = []
        for raw in stale:
            session = raw.decode()
            if not await self.redis.exists(key(session, "lease")):
                await self.redis.zadd(ARMED_SET, {session: now}, xx=True)
                await self.wake(session)
                woken.append(session)
        return woken

    async def option(self, session: str, name: str) -> str | None:
        """A per-session setting chosen by a person (e.g. `model`), or None for the default."""
        value = await done(self.redis.hget(key(session, "options"), name))
        return value.decode() if isinstance(value, bytes) else None

    async def set_option(self, session: str, name: str, value: str | None) -> None:
        if value is None:
            await done(self.redis.hdel(key(session, "options"), name))
        else:
            await done(self.redis.hset(key(session, "options"), name, value))

    async def stop(self, session: str) -> bool:
        """Ask every worker to cancel `session`'s running turn; True if one holds it."""
        await self.redis.publish(CANCEL_CHANNEL, session)
        return await self.busy(session)

    async def forget(self, session: str) -> int:
        """Delete everything Redis holds for `session` (state, inbox, options, events); the
        caller makes sure no turn runs there. Returns how many keys went."""
        pattern = key(re.sub(r"([*?\[\]\\])", r"\\\1", session), "*")
        names = [name async for name in self.redis.scan_iter(match=pattern, count=500)]
        if names:
            await self.redis.delete(*names)
        await done(self.redis.zrem(ARMED_SET, session))
        return len(names)

    async def busy(self, session: str) -> bool:
        """Whether a worker holds the session's lease (a turn is running)."""
        return bool(await self.redis.exists(key(session, "lease")))

    async def attempt(self, envelope: Envelope) -> int:
        """Count one more try at `envelope`; the count survives worker crashes."""
        name = key(envelope.session, f"attempts:{envelope.id}")
        count = int(await self.redis.incr(name))
        await self.redis.expire(name, self.dedup_ttl)
        return count

    async def dead_letter(self, envelope: Envelope, reason: str) -> None:
        entry = {"envelope": envelope.model_dump(mode="json"), "reason": reason, "at": time.time()}
        await done(self.redis.lpush(DEAD_LETTERS, json.dumps(entry)))
