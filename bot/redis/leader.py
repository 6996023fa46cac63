"""A leader lease in Redis: of several processes that could do a job, one does it.

The lease is a key holding the holder's token with a TTL. The holder renews it well within the
TTL; the others try to take it now and then and get it once the holder stops renewing (it
died, or lost Redis). A renewal or release checks the token first in one script, so a holder
that was paused past its TTL can never extend or delete its successor's lease: it learns it
lost the lease and stops.

The token names the host and process, so an operator (and a test) can see who leads.
"""

from __future__ import annotations

import os
import socket
import uuid

from redis.asyncio import Redis

_RENEW = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
"""


class LeaderLease:
    def __init__(self, redis: Redis, key: str, ttl: float) -> None:
        self.redis = redis
        self.key = key
        self.ttl_ms = int(ttl * 1000)
        self.token = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self._renew = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    async def acquire(self) -> bool:
        """Take the lease if nobody holds it; True if this process leads now."""
        return bool(await self.redis.set(self.key, self.token, nx=True, px=self.ttl_ms))

    async def renew(self) -> bool:
        """Extend the lease; False if it is no longer this process's (it must stop leading)."""
        return bool(await self._renew(keys=[self.key], args=[self.token, self.ttl_ms]))

    async def release(self) -> None:
        """Let the lease go at once, so a standby takes over without waiting for the TTL."""
        await self._release(keys=[self.key], args=[self.token])
