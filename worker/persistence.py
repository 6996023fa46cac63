"""Redis must persist: every accepted message, lease and session state lives there.

A Redis that keeps nothing on disk loses the messages in flight, and the turns running, when
it restarts. Each process checks at start (CONFIG GET) and says so once, loudly. Managed Redis
often refuses or renames CONFIG; then there is nothing to check, and nothing is said above INFO.
"""

from __future__ import annotations

import logging

from redis.asyncio import Redis
from redis.exceptions import RedisError

from bot.redis.results import done, text

log = logging.getLogger(__name__)

RISK = (
    'Redis persists nothing (appendonly no, save ""): a Redis restart loses accepted '
    "messages, the turns in progress and every session's state. Turn on AOF (appendonly yes) "
    "or RDB snapshots (save); see 'Redis must persist' in docs/OPERATIONS.md"
)


async def check_persistence(redis: Redis) -> str:
    """How this Redis persists: "aof", "rdb", "none", or "unknown" when it will not say."""
    try:
        values = {
            **await done(redis.config_get("appendonly")),
            **await done(redis.config_get("save")),
        }
    except (RedisError, OSError) as exc:
        log.info("could not read Redis's persistence settings (%s)", type(exc).__name__)
        return "unknown"
    settings = {text(k): text(v) for k, v in values.items()}
    if "appendonly" not in settings or "save" not in settings:
        log.info("Redis did not show its persistence settings")
        return "unknown"
    if settings["appendonly"] == "yes":
        return "aof"
    if settings["save"].strip():
        return "rdb"
    log.warning(RISK)
    return "none"
