"""Pairing codes waiting for an admin, and the budgets on asking for and guessing them.

A code is kept under its SHA-256 (`keys.pairing("code:…")`), never under itself, and Redis's
TTL is its lifetime: an expired code is simply gone, in every process at once. Looking a
guess up by its hash means no code is ever compared character by character, so how long a
lookup takes says nothing about how close a guess came; the record found still carries its
hash, checked against the guess's with `hmac.compare_digest` before it is trusted. The one
plain copy is the stranger's own (`asked:…`), kept so that asking again gives the same code;
nothing here logs a code.

Every change is one Lua script, so two web processes (or a web process and the command
line) never both issue a code beyond the account's few, nor both take the same code: taking
deletes it, which makes a code single use. Times come from Redis, not the processes' clocks.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any, Literal

from redis.asyncio import Redis

from bot.redis import keys

# KEYS: asked, pending, code. ARGV: ttl ms, most pending, code, hash, record (JSON).
_ISSUE = """
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local given = redis.call('GET', KEYS[1])
if given then return {'same', given} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then return {'full', ''} end
if redis.call('EXISTS', KEYS[3]) == 1 then return {'clash', ''} end
local ttl = tonumber(ARGV[1])
redis.call('SET', KEYS[3], ARGV[5], 'PX', ttl)
redis.call('SET', KEYS[1], ARGV[3], 'PX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[4])
redis.call('PEXPIRE', KEYS[2], ttl)
return {'new', ARGV[3]}
"""
# KEYS: code. ARGV: the prefix of pairing keys. The record, once deleted with what points
# to it; nil when no such code waits.
_TAKE = """
local record = redis.call('GET', KEYS[1])
if not record then return false end
redis.call('DEL', KEYS[1])
local r = cjson.decode(record)
redis.call('DEL', ARGV[1] .. 'asked:' .. r['account'] .. ':' .. r['person'])
redis.call('ZREM', ARGV[1] .. 'pending:' .. r['account'], r['hash'])
return record
"""
# KEYS: counters. ARGV: window ms, then each counter's most. 0 when every counter had room
# (each is counted), else the ms until the fullest one empties (none is counted).
_SPEND = """
local wait = 0
for i, name in ipairs(KEYS) do
  local n = tonumber(redis.call('GET', name) or '0')
  if n >= tonumber(ARGV[i + 1]) then
    wait = math.max(wait, redis.call('PTTL', name))
  end
end
if wait > 0 then return wait end
for i, name in ipairs(KEYS) do
  if redis.call('INCR', name) == 1 then redis.call('PEXPIRE', name, ARGV[1]) end
end
return 0
"""
_REFUND = """
for i, name in ipairs(KEYS) do
  if tonumber(redis.call('GET', name) or '0') > 0 then redis.call('DECR', name) end
end
return 0
"""


def code_hash(code: str) -> str:
    return hashlib.sha256(code.encode()).hexdigest()


@dataclass(frozen=True)
class Waiting:
    """A stranger's request, kept with their code: who, on which account, and where to tell
    them they are in (an envelope's session, platform and `reply_to`, as their platform
    made them)."""

    person: str
    platform: str
    account: str
    session: str
    reply_to: dict[str, Any]
    hash: str = ""
    expires_at: float = 0.0  # seconds since the epoch, as `list` reads the TTL

    def json(self) -> str:
        fields = {
            "person": self.person,
            "platform": self.platform,
            "account": self.account,
            "session": self.session,
            "reply_to": self.reply_to,
            "hash": self.hash,
        }
        return json.dumps(fields, separators=(",", ":"))

    @classmethod
    def read(cls, text: str | bytes, expires_at: float = 0.0) -> Waiting:
        data = json.loads(text)
        return cls(
            person=str(data["person"]),
            platform=str(data["platform"]),
            account=str(data["account"]),
            session=str(data["session"]),
            reply_to=dict(data["reply_to"]),
            hash=str(data["hash"]),
            expires_at=expires_at,
        )


@dataclass(frozen=True)
class Issued:
    """`new`: a code was made; `same`: the one given before still waits; `full`: the account
    has as many codes waiting as it may; `clash`: the random code was taken, try another."""

    outcome: Literal["new", "same", "full", "clash"]
    code: str = ""


class PairingCodes:
    def __init__(self, redis: Redis, lifetime: float, most_pending: int) -> None:
        self.redis = redis
        self.lifetime_ms = max(1, round(lifetime * 1000))
        self.most_pending = most_pending
        self._issue = redis.register_script(_ISSUE)
        self._take = redis.register_script(_TAKE)
        self._spend = redis.register_script(_SPEND)
        self._refund = redis.register_script(_REFUND)

    async def issue(self, code: str, waiting: Waiting) -> Issued:
        """Keep `code` for `waiting`, unless they have one already or the account is full."""
        digest = code_hash(code)
        record = dataclasses.replace(waiting, hash=digest)
        asked = keys.pairing(f"asked:{waiting.account}:{waiting.person}")
        pending = keys.pairing(f"pending:{waiting.account}")
        args: list[str | int] = [self.lifetime_ms, self.most_pending, code, digest, record.json()]
        outcome, given = await self._issue(
            keys=[asked, pending, keys.pairing(f"code:{digest}")], args=args
        )
        text = given.decode() if isinstance(given, bytes) else str(given)
        kind = outcome.decode() if isinstance(outcome, bytes) else str(outcome)
        return Issued(kind, text)  # type: ignore[arg-type]

    async def take(self, code: str) -> Waiting | None:
        """The request `code` was given for, deleted so nobody takes it again; None when no
        such code waits (never issued, expired, or taken already)."""
        digest = code_hash(code)
        found = await self._take(keys=[keys.pairing(f"code:{digest}")], args=[keys.pairing("")])
        if not found:
            return None
        waiting = Waiting.read(found)
        return waiting if hmac.compare_digest(waiting.hash, digest) else None

    async def waiting(self) -> list[Waiting]:
        """Every code that waits, the soonest to expire first (for operators)."""
        found: list[Waiting] = []
        async for key in self.redis.scan_iter(match=keys.pairing("code:*"), count=200):
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.get(key)
                pipe.pttl(key)
                record, ttl = await pipe.execute()
            if record is not None and ttl > 0:
                now = float((await self.redis.time())[0])
                found.append(Waiting.read(record, expires_at=now + ttl / 1000))
        return sorted(found, key=lambda w: w.expires_at)

    async def spend(self, budgets: list[tuple[str, int]], window: float) -> float:
        """Count one try against each `(name, most)` budget of this window; 0 when all had
        room, else the seconds until they do (nothing counted)."""
        names = [keys.pairing(name) for name, _ in budgets]
        args: list[int] = [max(1, round(window * 1000)), *(most for _, most in budgets)]
        return int(await self._spend(keys=names, args=args)) / 1000

    async def refund(self, names: list[str]) -> None:
        """Give back one try to each budget: a right code costs nothing."""
        await self._refund(keys=[keys.pairing(name) for name in names], args=[])
