"""The directories every process of a deployment must share, checked to be one and the same.

Parley keeps on disk what does not belong in Redis or SQL: the files people send and the
agent makes (PARLEY_FILES_DIR: the process that received a file stores it, another one reads
it), the sessions' workspaces (PARLEY_WORKSPACE_DIR: a session's turns run on whichever worker
is free, and `parley web` removes a deleted session's), and a SQLite database's file. On
several hosts each must be one shared directory (NFS, EFS, CephFS, a ReadWriteMany volume);
a host with a directory of its own would answer with files missing, without a word.

So each process puts a mark in each directory that exists (`.parley-volume`, a random id
written once, by whichever process comes first) and compares it with the mark Redis holds
for that directory (`keys.shared_dir`): the first process to check sets it, and every
process whose mark matches keeps it alive (a TTL of `TTL_S`, so a deployment that moved
to new storage as a whole is not held to the old mark for long). A different mark means
this process's directory is not the one the others use: `check` says so in one line that
names the variable, for the worker's log and the web process's `/readyz`. A directory that
does not exist yet is skipped: nothing was written to it, and its first write makes it.

A process remembers the mark it matched for each directory (`_MATCHED`, one process's own
knowledge), so a directory deleted and made again under it (a data folder wiped, then
restored) takes that mark back rather than a new one: the process, and the others, go on
agreeing. A process that never matched a directory has no mark to give it, so a host's own
empty directory still gets a mark of its own, and is told apart.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from pathlib import Path

from redis.asyncio import Redis
from sqlalchemy.engine import make_url

from bot.config.database_url import database_url
from bot.config.settings import Settings
from bot.redis import keys

MARK = ".parley-volume"
TTL_S = 600  # seconds a mark outlives the last process that confirmed it
EVERY_S = 60.0  # how often a running worker checks again
_MATCHED: dict[Path, str] = {}  # the mark this process found each directory holding, last

# The mark held (set if none is); the TTL refreshed only for the process that matches it.
_HELD = """
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  return ARGV[1]
end
if held == ARGV[1] then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return held
"""


def shared_dirs(settings: Settings) -> dict[str, tuple[str, Path]]:
    """Each shared directory's name, and the variable that sets it with its path."""
    found = {
        "files": ("PARLEY_FILES_DIR", settings.files_dir),
        "workspaces": ("PARLEY_WORKSPACE_DIR", settings.workspace_dir),
    }
    url = make_url(database_url(settings.database_url))
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        found["database"] = ("DATABASE_URL", Path(str(url.database)).parent)
    return found


def mark_of(folder: Path, known: str | None = None) -> str | None:
    """The folder's mark, written now if it has none (`known`, else a new one); None if there
    is no folder yet."""
    path = folder / MARK
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        if not folder.is_dir():
            return None
    new = known or uuid.uuid4().hex
    draft = folder / f"{MARK}.{uuid.uuid4().hex}"
    draft.write_text(new, encoding="ascii")
    try:
        os.link(draft, path)  # atomic: of two processes marking at once, one mark wins
    except FileExistsError:
        pass
    finally:
        with contextlib.suppress(OSError):
            draft.unlink()
    return path.read_text(encoding="ascii").strip()


async def check(redis: Redis, settings: Settings) -> str | None:
    """None if every shared directory here is the one the other processes use, else one
    line per directory that is not (or cannot be marked)."""
    problems = []
    held = redis.register_script(_HELD)
    for name, (variable, folder) in shared_dirs(settings).items():
        try:
            mark = await asyncio.to_thread(mark_of, folder, _MATCHED.get(folder))
        except (OSError, UnicodeError) as exc:
            problems.append(f"{variable} ({folder}) cannot be marked ({type(exc).__name__})")
            continue
        if mark is None:
            continue
        found = await held(keys=[keys.shared_dir(name)], args=[mark, TTL_S])
        if (found.decode() if isinstance(found, bytes) else str(found)) == mark:
            _MATCHED[folder] = mark
        else:
            problems.append(
                f"{variable} ({folder}) is not the directory the other processes use: on "
                "several hosts it must be one shared directory (docs/OPERATIONS.md, Many hosts)"
            )
    return "; ".join(problems) or None
