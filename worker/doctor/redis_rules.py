"""What the doctor expects of the Redis it is given: a version new enough for the commands
Parley sends, persistence on, and nothing of Parley's ever evicted.

The version: Parley's newest commands are `EXPIRE … NX` (the burst count of a group chat's
unaddressed messages, `adapters.chat.activation`), which Redis 7.0 brought; `SET … GET` and
`XTRIM … MINID` (6.2) and `SET … KEEPTTL` (6.0) are older. An older Redis accepts Parley's
connection and fails those calls one by one, so it is checked by its version rather than
found out by a message in a group.

Eviction: every accepted message waits in Redis, in keys without a lifetime; leases,
duplicate marks and approvals have one. An `allkeys-*` policy may evict a mailbox, a
`volatile-*` one a lease or a mark (an update delivered twice then runs twice). Only
`noeviction` is safe: a full Redis then refuses new writes, which Parley reports, instead of
forgetting what it already accepted. A policy is harmless while no `maxmemory` is set, but
it waits for the day someone sets one.

These rules take what Redis said (INFO, CONFIG GET) and return the finding; the checks
that ask Redis are in `worker.doctor.stores`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from worker.doctor.report import Finding, failed, ok, warning

NEEDED = (7, 0)
NEEDS = "EXPIRE … NX, SET … GET, XTRIM … MINID"
FULL = 0.9  # of maxmemory used: a noeviction Redis this full soon refuses new messages
PERSISTENCE = "redis persistence"
EVICTION = "redis eviction"


def version_tuple(version: str) -> tuple[int, ...]:
    """`7.0.15` as (7, 0, 15); the numeric parts before any other text."""
    parts = []
    for part in version.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        parts.append(int(digits[0]))
        if digits[0] != part:  # `4-valkey`, `0-rc1`: nothing after counts
            break
    return tuple(parts)


def server_finding(info: Mapping[str, object], where: str) -> Finding:
    """The server: its version, and that it takes writes (a replica does not)."""
    version = str(info.get("redis_version", "unknown"))
    role = str(info.get("role", "master"))
    found = f"Redis {version} at {where}"
    if version_tuple(version) < NEEDED:
        return failed(
            "redis",
            f"{found}; Parley needs {NEEDED[0]}.{NEEDED[1]} or newer ({NEEDS})",
            f"upgrade Redis to {NEEDED[0]}.{NEEDED[1]} or newer (the Compose file runs 7.4)",
        )
    if role not in ("master", "primary"):
        return failed(
            "redis",
            f"{found} is a read-only replica (role {role})",
            "point REDIS_URL at the primary (with Sentinel, at the Sentinel service)",
        )
    return ok("redis", found)


def persistence_finding(config: Mapping[str, str] | None, info: Mapping[str, object]) -> Finding:
    """How Redis persists, from CONFIG GET (None where CONFIG is disabled) and INFO."""
    aof = str(info.get("aof_enabled", "")) == "1"
    if aof and str(info.get("aof_last_write_status", "ok")) != "ok":
        return failed(
            PERSISTENCE,
            "AOF is on but Redis could not write it (aof_last_write_status:err)",
            "free space on Redis's disk and read its log; it refuses writes until then",
        )
    if str(info.get("rdb_last_bgsave_status", "ok")) != "ok":
        return failed(
            PERSISTENCE,
            "Redis's last RDB snapshot failed (rdb_last_bgsave_status:err)",
            "free space on Redis's disk and read its log; with a failed snapshot it refuses "
            "writes (stop-writes-on-bgsave-error)",
        )
    if aof:
        return ok(PERSISTENCE, "AOF on (appendonly yes)")
    if config is None:
        return warning(
            PERSISTENCE,
            "AOF is off, and whether RDB snapshots are on cannot be read (CONFIG is disabled)",
            "make sure this Redis persists (appendonly yes, or a save schedule; on a managed "
            "Redis, its persistence option)",
        )
    save = config.get("save", "").strip()
    if save:
        return ok(PERSISTENCE, f"RDB snapshots (save {save}); AOF off")
    return failed(
        PERSISTENCE,
        'nothing is persisted (appendonly no, save ""): a Redis restart loses accepted '
        "messages and every session's state",
        "set appendonly yes (or a save schedule) in redis.conf, or start it with "
        "redis-server --appendonly yes",
    )


def eviction_finding(info: Mapping[str, object]) -> Finding:
    """Whether Redis may evict Parley's keys, and how close it is to its limit."""
    policy = str(info.get("maxmemory_policy", "unknown"))
    limit = _int(info.get("maxmemory"))
    used = _int(info.get("used_memory"))
    shown = f"maxmemory-policy {policy}, maxmemory {_size(limit) if limit else '0 (no limit)'}"
    if policy == "noeviction":
        if limit and used >= FULL * limit:
            return warning(
                EVICTION,
                f"{shown}; {_size(used)} used ({used / limit:.0%}): once full, Redis refuses "
                "new messages",
                "raise maxmemory, or find what fills it (redis-cli --bigkeys)",
            )
        return ok(EVICTION, shown)
    victims = (
        "mailboxes and sessions' state"
        if policy.startswith("allkeys")
        else ("leases, duplicate marks and approvals")
    )
    if not limit:
        return warning(
            EVICTION,
            f"{shown}: nothing is evicted while no maxmemory is set, but then Parley's "
            f"{victims} would be",
            "set maxmemory-policy noeviction (in redis.conf, or CONFIG SET) before any maxmemory",
        )
    return failed(
        EVICTION,
        f"{shown}: Redis may evict Parley's {victims}",
        "set maxmemory-policy noeviction (in redis.conf, or CONFIG SET maxmemory-policy "
        "noeviction), and size maxmemory for the backlog",
    )


def _int(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0


def _size(count: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} B"
