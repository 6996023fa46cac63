"""Noticing that the SQLite file was deleted or replaced under a running process.

SQLite keeps its file open. Delete the data directory under a running worker and the worker
goes on writing, without an error, to a file nobody else can open any more, while a process
started afterwards makes a new, empty database at the same path: the record splits in two,
and the half in the deleted file vanishes when the worker stops.

So each connection remembers which file (device and inode) it opened, and every checkout
from the pool, that is before every transaction, compares it with the file now at the path:

- No file at the path: the transaction fails with `DatabaseFileGone`, like any database
  outage. Nothing more goes to the deleted file; the record's writes fail, so the runs and
  messages wait in their sessions' state and are caught up once a database is back. SQLite
  is told never to create the file (`mode=rw`): only a process starting up (its migration)
  makes a database, so a file without tables never appears behind the operator's back.
- Another file at the path (restored from a backup, or made by a process started since):
  that file is the database now, as it is for every process started now, so the stale
  connections are dropped and new ones open it.

Each change is logged once, as an ERROR naming the path, and `problem()` says what is wrong
for health checks (the web's /healthz, the worker's periodic look). The -wal and -shm files
are not watched: SQLite makes and removes them itself, and they go with the directory. That
is also why a backup must be restored with the processes stopped (or into a new directory):
SQLite pairs a file with the -wal beside it, and while a process holds the old file its -wal
stays there and would be read as the restored file's.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import event
from sqlalchemy.exc import InvalidatePoolError
from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger(__name__)
FileId = tuple[int, int]


class DatabaseFileGone(Exception):
    """The SQLite file is no longer at its path; the message names the path."""


def file_id(path: Path) -> FileId | None:
    """The file at `path`, or None if there is none this process can see."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


class DatabaseFile:
    """The file behind one engine; `watch` makes the engine's pool consult it."""

    def __init__(self, path: Path) -> None:
        self.path = path.absolute()
        self.known = file_id(self.path)  # the file this process uses, as it last saw it

    def watch(self, engine: AsyncEngine) -> None:
        pool = engine.sync_engine
        event.listen(pool, "do_connect", self._connect)
        event.listen(pool, "connect", self._opened)
        event.listen(pool, "checkout", self._checkout)

    def problem(self) -> str | None:
        """Why the database cannot be used now, or None."""
        return self._gone() if self.look() is None else None

    def look(self) -> FileId | None:
        """The file now at the path; a change since the last look is logged once."""
        now = file_id(self.path)
        if now != self.known:
            if now is None:
                log.error(
                    "%s: nothing is written to the record until a database is back at that "
                    "path; meanwhile what it misses waits in each session's state",
                    self._gone(),
                )
            elif self.known is None:
                log.warning(
                    "database file %s is back (a new or a restored file); writing to it again",
                    self.path,
                )
            else:
                log.error(
                    "database file %s was replaced by another file while in use; "
                    "writing to the new file from now on",
                    self.path,
                )
            self.known = now
        return now

    def _gone(self) -> str:
        return f"database file {self.path} is gone (deleted while in use?)"

    def _connect(self, dialect: Any, record: Any, cargs: list[Any], cparams: Any) -> None:
        """Open the file at the path, never create it."""
        if self.look() is None:
            raise DatabaseFileGone(self._gone())
        cargs[0] = f"file:{quote(str(self.path))}?mode=rw"
        cparams["uri"] = True

    def _opened(self, connection: Any, record: Any) -> None:
        record.info["file"] = file_id(self.path)

    def _checkout(self, connection: Any, record: Any, proxy: Any) -> None:
        now = self.look()
        if now is None:
            raise DatabaseFileGone(self._gone())
        if record.info.get("file") != now:
            raise InvalidatePoolError(f"{self.path} is another file now")


def watch_file(engine: AsyncEngine) -> DatabaseFile | None:
    """Watch the engine's file, if it is a SQLite file (not PostgreSQL, not in memory)."""
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:"):
        return None  # a SQLite URI: the caller chose how it is opened
    watched = DatabaseFile(Path(database))
    watched.watch(engine)
    return watched
