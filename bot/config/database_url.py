"""Reading DATABASE_URL: the one check both the settings and the engine make, below both.

The settings refuse a URL Parley cannot use when they are loaded, and the engine connects with
the driver chosen here; neither imports the other for it.
"""

from __future__ import annotations

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import NoSuchModuleError

DRIVERS = {"sqlite": "sqlite+aiosqlite", "postgresql": "postgresql+asyncpg"}


class BadDatabaseUrl(ValueError):
    """DATABASE_URL cannot be used; the message names the variable and never its password."""


def database_url(raw: str) -> URL:
    """The URL with its async driver: `postgresql://…` and `sqlite:///…` are accepted too, and
    so is another driver SQLAlchemy knows (`postgresql+psycopg2://`), replaced. A driver it
    does not know, or a port no socket has, is a mistake said now in one line, not found by
    the first connection deep inside the driver. No message repeats the URL (its password)."""
    try:
        url = make_url(raw)
    except Exception:
        raise BadDatabaseUrl("DATABASE_URL: not a database URL") from None
    backend = url.get_backend_name()
    if backend == "postgres":
        backend = "postgresql"
    if backend not in DRIVERS:
        raise BadDatabaseUrl(
            f"DATABASE_URL: {backend!r} is not supported (use sqlite or postgresql)"
        )
    if "+" in url.drivername and url.drivername != DRIVERS[backend]:
        try:
            url.get_dialect()
        except NoSuchModuleError:
            raise BadDatabaseUrl(
                f"DATABASE_URL: no driver {url.get_driver_name()!r} for {backend} "
                f"(write {backend}:// or {DRIVERS[backend]}://)"
            ) from None
    if url.port is not None and not 1 <= url.port <= 65535:
        raise BadDatabaseUrl("DATABASE_URL: the port must be a number from 1 to 65535")
    return url.set(drivername=DRIVERS[backend])
