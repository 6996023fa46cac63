"""The web process's Redis pool: bounded, and idle connections are closed.

redis-py's pool opens a connection whenever all are busy and keeps every one it opened for
good, so a burst of requests leaves the web process holding that many connections to Redis
forever. This one opens at most `max_connections` (a request beyond waits for a free one
rather than failing) and closes connections nobody used for `idle_timeout` seconds
(`worker.redis_connections`, where every process's connections are made).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

from arq.connections import ArqRedis
from redis.exceptions import RedisError

from bot.config.settings import Settings
from worker.redis_connections import IdleClosingPool, bounded_pool

log = logging.getLogger(__name__)

WAIT_S = 20  # a command waits this long for a free connection before it fails
CONNECT_WAIT_S = 60  # how long `parley web` waits at start for Redis to answer


class RedisUnavailable(Exception):
    """Redis did not answer while `parley web` started: one line for the command to print."""


def shown_url(url: str) -> str:
    """REDIS_URL for a message: never its password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return parts._replace(netloc=netloc).geturl()


def shown_where(settings: Settings) -> str:
    """Where Redis is, for a message: REDIS_URL without its password, or the master the
    sentinels are asked for."""
    found = settings.redis_sentinel
    if found is None:
        return shown_url(settings.redis_url)
    sentinels = ",".join(f"{host}:{port}" for host, port in found.addresses)
    return f"the master {found.master!r} of the sentinels {sentinels}"


async def open_pool(settings: Settings, *, wait: float = CONNECT_WAIT_S) -> ArqRedis:
    """A client on a bounded pool that can enqueue arq jobs. A Redis that is still starting
    (compose brings services up together) is waited for, as the database is."""
    pool = bounded_pool(
        settings,
        max_connections=settings.redis_connections,
        timeout=WAIT_S,
        idle_timeout=settings.redis_idle_timeout,
    )
    redis = ArqRedis(pool_or_conn=pool)
    redis.auto_close_connection_pool = True  # closing the client closes its pool
    loop = asyncio.get_running_loop()
    deadline, delay = loop.time() + wait, 0.5
    while True:
        try:
            await redis.ping()
            return redis
        except (RedisError, OSError) as exc:
            where = shown_where(settings)
            problem = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            if loop.time() + delay > deadline:
                await redis.aclose()
                raise RedisUnavailable(f"no Redis at {where} ({problem})") from None
            log.warning("Redis at %s not ready (%s); trying again in %.1f s", where, problem, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5)


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
