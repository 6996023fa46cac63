"""The web process's Redis pool: bounded, and idle connections are closed.

redis-py's pool opens a connection whenever all are busy and keeps every one it opened for
good, so a burst of requests leaves the web process holding that many connections to Redis
forever. This one opens at most `max_connections` (a request beyond waits for a free one
rather than failing) and closes connections nobody used for `idle_timeout` seconds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from arq.connections import ArqRedis
from redis.asyncio import BlockingConnectionPool
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import RedisError

from bot.config import Settings

log = logging.getLogger(__name__)

WAIT_S = 20  # a command waits this long for a free connection before it fails
CONNECT_ATTEMPTS = 5


class IdleClosingPool(BlockingConnectionPool):
    def __init__(self, *, idle_timeout: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.idle_timeout = idle_timeout
        self._released: dict[AbstractConnection, float] = {}

    async def release(self, connection: AbstractConnection) -> None:
        self._released[connection] = time.monotonic()
        await super().release(connection)

    async def close_idle(self) -> int:
        """Close the connections idle for longer than `idle_timeout`; how many were closed."""
        cutoff = time.monotonic() - self.idle_timeout
        async with self._condition:  # no command takes a connection while we choose
            idle = [c for c in self._available_connections if self._released.get(c, 0) < cutoff]
            for connection in idle:
                self._available_connections.remove(connection)
                self._released.pop(connection, None)
        for connection in idle:
            await connection.disconnect()
        return len(idle)


async def open_pool(settings: Settings) -> ArqRedis:
    """A client on a bounded pool that can enqueue arq jobs; retried while Redis starts."""
    pool = IdleClosingPool.from_url(
        settings.redis_url,
        max_connections=settings.redis_connections,
        timeout=WAIT_S,
        idle_timeout=settings.redis_idle_timeout,
        socket_connect_timeout=5,
    )
    redis = ArqRedis(pool_or_conn=pool)
    redis.auto_close_connection_pool = True  # closing the client closes its pool
    for attempt in range(CONNECT_ATTEMPTS):
        try:
            await redis.ping()
            return redis
        except (RedisError, OSError):
            if attempt == CONNECT_ATTEMPTS - 1:
                await redis.aclose()
                raise
            await asyncio.sleep(1)
    raise AssertionError("unreachable")


async def closing_idle(pool: IdleClosingPool) -> AsyncIterator[None]:
    """For `app.cleanup_ctx`: close idle connections every so often while the app runs."""

    async def loop() -> None:
        while True:
            await asyncio.sleep(min(pool.idle_timeout / 2, 30))
            try:
                await pool.close_idle()
            except Exception:
                log.warning("could not close idle Redis connections", exc_info=True)

    task = asyncio.create_task(loop())
    yield
    task.cancel()
