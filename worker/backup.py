"""`parley backup DEST`: a consistent copy of a SQLite database while Parley runs.

Why a command rather than the one line of Python it wraps: `sqlite3.connect` makes an empty
database where it finds none, so a mistyped path backs up nothing and says nothing; a copy
written over an older backup loses that one; and a copy nobody opened is not known to be good.
This opens the configured database read-only (it must exist), copies it with SQLite's online
backup (a snapshot, however many processes write meanwhile), refuses to overwrite, checks the
copy (`PRAGMA integrity_check`), and says what it holds. PostgreSQL has `pg_dump` for this;
Redis's AOF is copied as it is (docs/OPERATIONS.md, "Backups").
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from bot.config.database_url import database_url


class BackupRefused(Exception):
    """The backup was not made; the message says why, in one line (never a password)."""


@dataclass(frozen=True)
class Copied:
    source: Path
    copy: Path
    schema: str
    sessions: int
    messages: int

    def line(self) -> str:
        return (
            f"backed up {self.source} to {self.copy} (schema {self.schema}, "
            f"{self.sessions} sessions, {self.messages} messages)"
        )


def sqlite_path(raw_url: str) -> Path:
    """The file of DATABASE_URL, or BackupRefused for PostgreSQL and in-memory databases."""
    url = database_url(raw_url)
    if url.get_backend_name() != "sqlite":
        raise BackupRefused(
            "parley backup copies a SQLite database; back PostgreSQL up with "
            "`pg_dump -Fc` (docs/OPERATIONS.md, Backups)"
        )
    if not url.database or url.database == ":memory:":
        raise BackupRefused("DATABASE_URL names no database file to back up")
    return Path(url.database)


def back_up(raw_url: str, destination: Path) -> Copied:
    """Copy the SQLite database of `raw_url` to `destination`, a new file, and check it."""
    source = sqlite_path(raw_url)
    if not source.is_file():
        raise BackupRefused(f"no database at {source} (DATABASE_URL): nothing to back up")
    if destination.is_dir():
        destination = destination / source.name
    if destination.exists():
        raise BackupRefused(f"{destination} exists already: name a new file")
    if not destination.parent.is_dir():
        raise BackupRefused(f"no folder {destination.parent} to write the backup in")
    made = False
    try:
        with (
            contextlib.closing(sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True))
            as live,
            contextlib.closing(sqlite3.connect(destination)) as copy,
        ):  # fmt: skip
            made = True
            live.backup(copy)
            return _checked(source, destination, copy)
    except sqlite3.Error as exc:
        if made:
            destination.unlink(missing_ok=True)  # a partial copy is no backup
        raise BackupRefused(f"the backup of {source} failed: {exc}") from None


def _checked(source: Path, destination: Path, copy: sqlite3.Connection) -> Copied:
    """What the copy holds, once SQLite finds it sound."""
    (verdict,) = copy.execute("PRAGMA integrity_check").fetchone()
    if verdict != "ok":
        raise sqlite3.DatabaseError(f"the copy is damaged ({verdict})")
    tables = {row[0] for row in copy.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def count(table: str) -> int:
        if table not in tables:
            return 0
        return int(copy.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    schema = "empty"
    if "alembic_version" in tables:
        found = copy.execute("SELECT version_num FROM alembic_version").fetchone()
        schema = found[0] if found else "empty"
    return Copied(source, destination, schema, count("sessions"), count("messages"))
