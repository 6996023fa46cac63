"""How each worker's MCP servers are doing, kept in Redis for operators.

Every worker has its own view (its own connections), so each writes a hash of its own,
`parley:mcp:{host}:{pid}`, whose TTL lapses soon after the worker is gone. `mcp_status`
merges the live views: a server is connected if any worker has it connected, since a
message may reach that worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

from redis.asyncio import Redis
from redis.exceptions import RedisError

from bot.redis import keys
from bot.redis.instance import instance
from bot.redis.results import done, text

log = logging.getLogger(__name__)
REFRESH = 10.0
TTL = 30.0
State = Literal["connected", "connecting", "failed", "disabled", "denied"]
RANK = {"connected": 4, "connecting": 3, "failed": 2, "denied": 1, "disabled": 0}


@dataclass(frozen=True)
class ServerStatus:
    """How a server is doing, as operators see it (`/api/tools`, the chat's help)."""

    state: State
    tools: list[str] = field(default_factory=list)
    error: str | None = None
    since: float = 0.0


def worker_key() -> str:
    return keys.mcp_status(instance())


async def write_status(redis: Redis, key: str, status: Mapping[str, ServerStatus]) -> None:
    values = {name: json.dumps(asdict(item)) for name, item in status.items()}
    async with redis.pipeline(transaction=True) as pipe:
        pipe.delete(key)
        if values:
            pipe.hset(key, mapping=values)
            pipe.expire(key, int(TTL))
        await pipe.execute()


class Observed(Protocol):
    """What `publish` watches (the worker's `McpServers`): their states, and an event set
    whenever one changes. Named here, not imported: the servers' module imports this one."""

    changed: asyncio.Event

    def status(self) -> dict[str, ServerStatus]: ...


async def publish(redis: Redis, servers: Observed, key: str, every: float = REFRESH) -> None:
    """Write `servers`' state now, on every change, and every `every` seconds; until
    cancelled, when the key is removed."""
    try:
        while True:
            servers.changed.clear()
            try:
                await write_status(redis, key, servers.status())
            except (RedisError, OSError) as exc:  # the worker restarts itself without Redis
                log.debug("could not write the MCP status: %s", exc)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(every):
                    await servers.changed.wait()
    finally:
        with contextlib.suppress(RedisError, OSError):
            await redis.delete(key)


async def mcp_status(redis: Redis) -> dict[str, ServerStatus]:
    """Every server any live worker knows, in the best state any of them sees it in."""
    merged: dict[str, ServerStatus] = {}
    async for key in redis.scan_iter(match=keys.MCP_STATUS_MATCH, count=100):
        fields: dict[Any, Any] = await done(redis.hgetall(key))
        for raw_name, raw in fields.items():
            try:
                status = ServerStatus(**json.loads(text(raw)))
            except (ValueError, TypeError):
                continue  # written by another version
            name = text(raw_name)
            known = merged.get(name)
            if known is None or RANK.get(status.state, -1) > RANK.get(known.state, -1):
                merged[name] = status
    return dict(sorted(merged.items()))
