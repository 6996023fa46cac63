"""The stores every process needs: Redis (reachable, its version, persistence, eviction)
and the SQL database (reachable, its schema at the revision this code needs).

Each reports what it found by address, passwords hidden (`shown_url`), and an error by its
type and first line, which `report.Scrub` then clears of any secret. The database is only
read: a SQLite file that is not there yet is reported, never created (any process makes it
when it starts, as `parley migrate` does).
"""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis
from redis.exceptions import AuthenticationError, RedisError, ResponseError

from bot.config.database_url import database_url
from bot.config.settings import Settings
from bot.redis.results import done, text
from bot.store import revision
from bot.store.engine import make_engine, shown_url
from worker import redis_connections
from worker.doctor.redis_rules import (
    EVICTION,
    PERSISTENCE,
    eviction_finding,
    persistence_finding,
    server_finding,
)
from worker.doctor.report import Finding, failed, ok, skipped, warning
from worker.redis_pool import shown_where

REDIS_STUCK = "check that REDIS_URL's host answers from here (network, firewall; rediss:// for TLS)"
DATABASE_STUCK = "check that DATABASE_URL's host answers from here (network, firewall)"


def _said(exc: BaseException) -> str:
    first = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


async def check_redis(settings: Settings, wait: float) -> list[Finding]:
    """The server, its persistence and its eviction policy; `wait`: seconds for each reply."""
    where = shown_where(settings)
    client = redis_connections.client(settings, socket_connect_timeout=wait, socket_timeout=wait)
    try:
        info = await done(client.info())
        config = await _config(client)
    except AuthenticationError as exc:
        return _unreached(
            failed(
                "redis",
                f"Redis at {where} refused: {_said(exc)}",
                "check the password (and user) in REDIS_URL: redis://USER:PASSWORD@HOST:PORT/DB",
            )
        )
    except ResponseError as exc:  # an ACL that refuses INFO, say
        return _unreached(
            failed(
                "redis",
                f"Redis at {where} refused a command ({_said(exc)})",
                "let REDIS_URL's user run INFO (and CONFIG GET, for the persistence check)",
            )
        )
    except (RedisError, OSError) as exc:
        return _unreached(
            failed(
                "redis",
                f"no answer from Redis at {where} ({_said(exc)})",
                f"start Redis, or set REDIS_URL to where it runs; {REDIS_STUCK}",
            )
        )
    finally:
        await client.aclose()
    return [
        server_finding(info, where),
        persistence_finding(config, info),
        eviction_finding(info),
    ]


def _unreached(finding: Finding) -> list[Finding]:
    return [finding, skipped(PERSISTENCE, "Redis did not answer"), skipped(EVICTION, "the same")]


async def _config(client: Redis) -> dict[str, str] | None:
    """`appendonly` and `save` from CONFIG GET, or None where CONFIG is disabled or renamed
    (as on many managed Redis services)."""
    try:
        values = {
            **await done(client.config_get("appendonly")),
            **await done(client.config_get("save")),
        }
    except ResponseError:
        return None
    return {text(key): text(value) for key, value in values.items()} or None


async def check_database(settings: Settings) -> list[Finding]:
    url = database_url(settings.database_url)
    where = shown_url(url)
    if url.get_backend_name() == "sqlite" and (problem := _sqlite_problem(url.database)):
        return [problem]
    engine = make_engine(settings.database_url)
    try:
        at = await revision.read(engine)
    except Exception as exc:  # the drivers' errors have no common base but Exception
        return [
            failed(
                "database",
                f"cannot read the database at {where} ({_said(exc)})",
                "start the database, or set DATABASE_URL to where it runs (its user and password "
                f"too); {DATABASE_STUCK}",
            )
        ]
    finally:
        await engine.dispose()
    return [schema_finding(at, where)]


def _sqlite_problem(path: str | None) -> Finding | None:
    """A SQLite database that is not a file, or not there yet (not made here: a process
    that starts, or `parley migrate`, makes it)."""
    if not path or path == ":memory:":
        return warning(
            "database",
            "SQLite in memory: every process would have a database of its own",
            "set DATABASE_URL to a file (sqlite+aiosqlite:///./data/parley.db) or to PostgreSQL",
        )
    if not path.startswith("file:") and not Path(path).is_file():
        return failed(
            "database",
            f"no SQLite database at {Path(path).absolute()} yet",
            "run `parley migrate` (every process also makes it when it starts); "
            "check DATABASE_URL and the working directory",
        )
    return None


def schema_finding(at: str | None, where: str) -> Finding:
    """The schema's revision against the code's (`revision.HEAD`)."""
    head = revision.HEAD
    if at == head:
        return ok("database", f"{where}, schema at {head} (this code's)")
    if at is None:
        return failed("database", f"{where} is empty (no schema yet)", "run `parley migrate`")
    if at.isdigit() and head.isdigit() and int(at) < int(head):
        return failed(
            "database", f"{where}: schema at {at}, the code needs {head}", "run `parley migrate`"
        )
    return failed(
        "database",
        f"{where}: schema at {at}, which this code ({head}) does not know: a newer Parley "
        "migrated it",
        f"run the newer Parley, or with it `parley migrate {head} --down` first",
    )
