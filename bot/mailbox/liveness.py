"""A worker's liveness key: a killed worker's sessions go to another one in seconds.

A lease lives 30 s (PARLEY_LEASE_TTL) so that a turn renews it rarely, but a worker killed
mid-reply would then leave its session frozen that long. So each lease token names the worker
that took it, and each worker keeps one key, `parley:worker:{id}`, alive with a short TTL
(PARLEY_LIVENESS_TTL, 3 s), refreshed every third of it. When the key lapses the sweep frees
the worker's leases and wakes the sessions (see `bot.mailbox.inbox`): a running worker takes one
within about liveness TTL + sweep interval. One key per worker rather than a short lease per
session: the refresh costs one command a second however many turns the worker runs, and the
long lease TTL stays as the backstop.

The key is refreshed from the worker's event loop, not from a thread: a loop stalled past the
TTL cannot stream or commit either, so its sessions are better off with a worker that can. A
worker that wakes from such a stall (SIGSTOP, a VM pause) finds its key gone: it writes it
again and tells its turns' heartbeats (`lapsed`), which check their leases at once and stop
a turn whose lease went to another worker; whatever the paused turn still tries to save or
commit is refused by the fencing token anyway.

A refresh that fails (Redis briefly away) is tried again at the next beat; the TTL leaves room
for two missed beats, so a short blip costs no lease. A worker that could not reach Redis
lately is not `steady`: its sweep waits one TTL after contact is back, so that every other
live worker has refreshed its own key before this one judges who is dead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid

from redis.asyncio import Redis

from bot.redis import keys
from bot.waits import set_within

log = logging.getLogger(__name__)

# 1: the key was still there; 0: it had lapsed and is written anew.
_BEAT = """
if redis.call('PEXPIRE', KEYS[1], ARGV[1]) == 1 then return 1 end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return 0
"""


class Liveness:
    """One worker's liveness key and the loop that keeps it."""

    def __init__(self, redis: Redis, ttl: float) -> None:
        self.redis = redis
        self.ttl = ttl
        self.id = uuid.uuid4().hex  # hex only: the sweep reads it back out of lease tokens
        self.key = keys.worker(self.id)
        self._beat = redis.register_script(_BEAT)
        self._lapse = asyncio.Event()
        self._failed_at: float | None = None
        self.beaten_at: float | None = None  # monotonic time of the last beat Redis answered

    async def start(self) -> None:
        """Write the key before the worker takes any lease (a lease naming a worker with no
        key would be freed by the next sweep)."""
        await self.beat()

    async def beat(self) -> bool:
        """Refresh the key; False if it had lapsed (the sweep may have freed our leases)."""
        try:
            kept = bool(await self._beat(keys=[self.key], args=[int(self.ttl * 1000)]))
        except Exception:
            self._failed_at = time.monotonic()
            raise
        self.beaten_at = time.monotonic()
        return kept

    async def run(self) -> None:
        """Refresh the key every third of its TTL until cancelled."""
        while True:
            await asyncio.sleep(self.ttl / 3)
            try:
                kept = await self.beat()
            except Exception:  # two misses still fit in the TTL; the next beat tries again
                log.warning("could not refresh the liveness key", exc_info=True)
                continue
            if not kept:
                log.warning("liveness key had lapsed (a stall?); checking this worker's leases")
                self._lapse, lapse = asyncio.Event(), self._lapse
                lapse.set()

    async def lapsed(self, within: float) -> bool:
        """Wait up to `within` s; True at once if the key is found lapsed meanwhile."""
        return await set_within(self._lapse, within)

    def beating(self) -> bool:
        """Whether a beat was answered within one TTL: what `parley health worker` reports."""
        return self.beaten_at is not None and time.monotonic() - self.beaten_at < self.ttl

    def steady(self) -> bool:
        """Whether Redis has answered every beat for at least one TTL."""
        return self._failed_at is None or time.monotonic() - self._failed_at > self.ttl

    async def stop(self) -> None:
        """Delete the key on a clean stop: a lease left behind is freed at the next sweep."""
        with contextlib.suppress(Exception):
            await self.redis.delete(self.key)
