"""One rate budget for every worker, kept in Redis: token buckets by scope.

Platforms limit calls per chat, per bot and per workspace, whichever worker makes them. Each
scope is a bucket (`rate` tokens a second, at most `burst`) in Redis; a call takes a token
from every scope it belongs to, atomically, or learns how long to wait. A `retry_after` from
the platform pauses its scope for everyone.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from redis.asyncio import Redis

from bot.redis import keys

# All buckets are checked first and only then charged, so a call refused by one scope takes
# nothing from the others. Time comes from Redis, so the workers' clocks do not matter.
_TAKE = """
local now_parts = redis.call('TIME')
local now = now_parts[1] * 1000 + math.floor(now_parts[2] / 1000)
local cost = tonumber(ARGV[1])
local wait, levels = 0, {}
for i, name in ipairs(KEYS) do
  local rate, burst = tonumber(ARGV[i * 2]), tonumber(ARGV[i * 2 + 1])
  local b = redis.call('HMGET', name, 'tokens', 'ts', 'paused')
  local paused = tonumber(b[3]) or 0
  local tokens = tonumber(b[1]) or burst
  local ts = tonumber(b[2]) or now
  tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
  levels[i] = tokens
  if paused > now then wait = math.max(wait, paused - now) end
  if tokens < cost then wait = math.max(wait, math.ceil((cost - tokens) * 1000 / rate)) end
end
for i, name in ipairs(KEYS) do
  local rate, burst = tonumber(ARGV[i * 2]), tonumber(ARGV[i * 2 + 1])
  local left = levels[i]
  if wait == 0 then left = left - cost end
  redis.call('HSET', name, 'tokens', left, 'ts', now)
  redis.call('PEXPIRE', name, math.ceil(burst * 1000 / rate) + 60000)
end
return wait
"""
_PAUSE = """
local now_parts = redis.call('TIME')
local now = now_parts[1] * 1000 + math.floor(now_parts[2] / 1000)
local until_ms = now + tonumber(ARGV[1])
local current = tonumber(redis.call('HGET', KEYS[1], 'paused')) or 0
if until_ms > current then redis.call('HSET', KEYS[1], 'paused', until_ms) end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) + 60000)
return until_ms
"""


@dataclass(frozen=True)
class Scope:
    """A bucket: e.g. Scope("tg:chat:42", rate=1, burst=3) or Scope("tg:bot", rate=30)."""

    name: str
    rate: float
    burst: float = 1.0


class RateBudget:
    def __init__(self, redis: Redis) -> None:
        self._take = redis.register_script(_TAKE)
        self._pause = redis.register_script(_PAUSE)

    async def try_take(self, scopes: list[Scope], cost: float = 1.0) -> float:
        """0 if a token was taken from every scope, else the seconds to wait first."""
        args: list[float] = [cost]
        for scope in scopes:
            args += [scope.rate, max(scope.burst, cost)]
        wait_ms = await self._take(keys=[keys.rate(s.name) for s in scopes], args=args)
        return int(wait_ms) / 1000

    async def take(self, scopes: list[Scope], cost: float = 1.0) -> float:
        """Wait until every scope grants the call; returns the seconds waited."""
        waited = 0.0
        while (wait := await self.try_take(scopes, cost)) > 0:
            await asyncio.sleep(wait)
            waited += wait
        return waited

    async def pause(self, scope: Scope, seconds: float) -> None:
        """Stop every worker from using `scope` for `seconds` (a platform's retry_after)."""
        await self._pause(keys=[keys.rate(scope.name)], args=[int(seconds * 1000)])
