"""Every Redis connection Parley opens, made from the settings in one place.

The web process's pool, the workers' arq client, the event streams' reader, the task
announcer and the scheduler all connect here, so TLS (`rediss://` with the files of
`bot.config.redis_options`) and Redis Sentinel work in every process alike. arq's own
`RedisSettings.from_dsn` drops the TLS files and its Sentinel mode connects to the sentinels
without TLS or a password, so the worker gets an `ArqRedis` made here instead.

With Sentinel a connection asks the sentinels for the master's address whenever it
connects, and one that finds the master demoted (READONLY) drops and reconnects. That alone
is not enough: after SENTINEL FAILOVER the old master takes writes until the sentinels
demote it (some 10 s), and what lands there is lost when it becomes a replica. So a pool in
use also asks the sentinels, at most once a second, whether the master moved; when it did,
idle connections are closed and busy ones as they come back, and the next command of every
process reaches the new master, with no restart. The web process's pool keeps its bounds
then too (`IdleClosingPool` with the sentinels' lookup).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any
from urllib.parse import urlsplit

from arq.connections import ArqRedis
from redis.asyncio import BlockingConnectionPool, ConnectionPool, Redis
from redis.asyncio.connection import AbstractConnection, parse_url
from redis.asyncio.sentinel import (
    Sentinel,
    SentinelConnectionPool,
    SentinelManagedConnection,
    SentinelManagedSSLConnection,
)
from redis.exceptions import RedisError

from bot.config.redis_options import RedisSentinel
from bot.config.settings import Settings

CONNECT_TIMEOUT_S = 5.0
FOLLOW_S = 1.0  # how often a Sentinel pool in use asks whether the master moved
FOLLOW_WAIT_S = 1.0  # how long a command waits for that answer


class IdleClosingPool(BlockingConnectionPool):
    """A bounded pool: at most `max_connections` (a command beyond waits for a free one
    rather than failing), and connections nobody used for `idle_timeout` s are closed."""

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


class SentinelPool(SentinelConnectionPool):
    """redis-py's pool to the master the sentinels name, which follows a failover before
    the old master is demoted, and closes its connections to the sentinels when it is
    closed (redis-py's leaves them open)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]
        self._follow_at = 0.0
        self._following: asyncio.Task[None] | None = None

    async def get_connection(self, *args: Any, **kwargs: Any) -> AbstractConnection:
        await self.follow_master()
        return await super().get_connection(*args, **kwargs)  # type: ignore[no-any-return]

    async def follow_master(self) -> None:
        """Ask the sentinels where the master is when the last answer is older than
        `FOLLOW_S`, before the command that finds it so (one lookup for every command that
        waits), and no later than `FOLLOW_WAIT_S` after it was asked: a sentinel that is down
        may take its connect timeout to say so, and meanwhile the master we know is the best
        guess, so the commands after that go on without waiting for it."""
        now = time.monotonic()
        if self._following is None or (now >= self._follow_at and self._following.done()):
            self._follow_at = now + FOLLOW_S
            self._following = asyncio.create_task(self._ask_sentinels())
        left = self._follow_at - FOLLOW_S + FOLLOW_WAIT_S - now
        if left > 0 and not self._following.done():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await asyncio.shield(self._following)

    async def _ask_sentinels(self) -> None:
        # get_master_address closes the idle connections when the master moved
        with contextlib.suppress(RedisError):  # none answered: keep the master we know
            await self.get_master_address()  # type: ignore[no-untyped-call]

    async def release(self, connection: AbstractConnection) -> None:
        """A connection to a master the sentinels no longer name goes back closed."""
        address = (getattr(connection, "host", None), getattr(connection, "port", None))
        if self.master_address is not None and address != self.master_address:
            await connection.disconnect()
        await super().release(connection)

    async def disconnect(self, inuse_connections: bool = True) -> None:
        await super().disconnect(inuse_connections)
        if inuse_connections:  # closed, not just dropping idle ones after a failover
            if self._following is not None:
                self._following.cancel()
            for sentinel in self.sentinel_manager.sentinels:
                await sentinel.aclose()


class SentinelIdleClosingPool(IdleClosingPool, SentinelPool):
    """`IdleClosingPool` whose connections find the master through the sentinels."""

    async def get_connection(self, *args: Any, **kwargs: Any) -> AbstractConnection:
        await self.follow_master()  # the blocking pool's lookup does not call the one above
        return await super().get_connection(*args, **kwargs)  # type: ignore[no-any-return]


def url_options(settings: Settings) -> dict[str, Any]:
    """What REDIS_URL says (host, port, password, database, TLS or a socket), with the TLS
    files of the settings for `rediss://`."""
    options: dict[str, Any] = dict(parse_url(settings.redis_url))
    if _tls(settings):
        options |= settings.redis_tls.kwargs()
    return options


def _tls(settings: Settings) -> bool:
    return urlsplit(settings.redis_url).scheme == "rediss"


def _sentinel(settings: Settings, found: RedisSentinel) -> Sentinel:
    """The sentinels, reached as the master is (TLS when REDIS_URL says rediss://)."""
    reach: dict[str, Any] = {"socket_connect_timeout": CONNECT_TIMEOUT_S}
    if _tls(settings):
        reach |= {"ssl": True, **settings.redis_tls.kwargs()}
    if found.password is not None:
        reach["password"] = found.password
    return Sentinel(list(found.addresses), sentinel_kwargs=reach)  # type: ignore[no-untyped-call]


def _pool_options(settings: Settings, extra: dict[str, Any]) -> dict[str, Any]:
    """The pool's keyword arguments: REDIS_URL's, the sentinels' lookup if there are any."""
    options = url_options(settings) | extra
    found = settings.redis_sentinel
    if found is None:
        return options
    for key in ("host", "port", "path", "connection_class"):
        options.pop(key, None)
    managed = SentinelManagedSSLConnection if _tls(settings) else SentinelManagedConnection
    return options | {
        "service_name": found.master,
        "sentinel_manager": _sentinel(settings, found),
        "connection_class": managed,
    }


def pool(settings: Settings, **extra: Any) -> ConnectionPool:
    """An unbounded pool (arq's and redis-py's default) to Redis or its master."""
    options = _pool_options(settings, extra)
    if settings.redis_sentinel is not None:
        return SentinelPool(**options)
    return ConnectionPool(**options)


def bounded_pool(
    settings: Settings, *, max_connections: int, timeout: float, idle_timeout: float
) -> IdleClosingPool:
    """The web process's pool (`worker.redis_pool`): bounded, idle connections closed."""
    options = _pool_options(
        settings,
        {"max_connections": max_connections, "timeout": timeout, "idle_timeout": idle_timeout},
    )
    options.setdefault("socket_connect_timeout", CONNECT_TIMEOUT_S)
    if settings.redis_sentinel is not None:
        return SentinelIdleClosingPool(**options)
    return IdleClosingPool(**options)


def client(settings: Settings, **extra: Any) -> Redis:
    """A client on a pool of its own, closed with it; `extra`: connection options
    (`socket_timeout`, `single_connection_client`...)."""
    single = bool(extra.pop("single_connection_client", False))
    redis = Redis(connection_pool=pool(settings, **extra), single_connection_client=single)
    redis.auto_close_connection_pool = True
    return redis


def arq_client(settings: Settings) -> ArqRedis:
    """A client that enqueues and runs arq jobs, for `worker.jobs`; closed with its pool."""
    redis = ArqRedis(pool_or_conn=pool(settings, socket_connect_timeout=CONNECT_TIMEOUT_S))
    redis.auto_close_connection_pool = True
    return redis
