"""Removing workspaces' files: a deleted session's whole workspace, and, for retention, every
file older than the window in every workspace.

The files are what people and the model kept in a conversation, so they go when the record
of it goes: `DELETE /api/sessions/…` removes the session's workspace, and the worker's
retention job removes the workspaces of the sessions it deleted and every file last changed
before the window in the others, then the folders that left empty (a workspace too).

Both hold the workspace's write lock (`workspace_io.locked`), so they never meet a write half
done, and a write that waited for the lock while its workspace was removed makes a new one
(`workspace_io.writable`). Nothing is followed: `os.fwalk` and `shutil.rmtree` work from
directory fds, so a link in a workspace is removed, never what it points to. A whole
workspace is first renamed to `.removing-…`, a name no session's directory has (see
`session_dirname`), so the session gets a fresh one if it speaks again meanwhile, and a
removal cut short is finished by the next pass. Entries that cannot be a session's
directory (a volume's `lost+found`) are left alone.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from bot.tools.workspace_io import locked
from bot.tools.workspace_paths import DIR_FLAGS, session_dirname

log = logging.getLogger(__name__)
TRASH_PREFIX = ".removing-"
# What `session_dirname` makes: the encoded key, or `=` and its SHA-256.
SESSION_DIR = re.compile(r"(?:[a-z0-9_-]|%[0-9A-F]{2})+|=[0-9a-f]{64}")
LEFT_FULL = (errno.ENOTEMPTY, errno.EEXIST)


@contextlib.contextmanager
def _opened(base: Path) -> Iterator[int | None]:
    """An fd of the workspaces' directory, or None while there is none."""
    try:
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        yield None
        return
    try:
        yield fd
    finally:
        os.close(fd)


def remove_workspace(base: Path, session_key: str) -> bool:
    """Remove the session's workspace and everything in it; False if it had none."""
    with _opened(base) as base_fd:
        if base_fd is None:
            return False
        trash = TRASH_PREFIX + secrets.token_hex(8)
        try:
            os.rename(session_dirname(session_key), trash, src_dir_fd=base_fd, dst_dir_fd=base_fd)
        except FileNotFoundError:
            return False
        _remove(base_fd, trash)
        return True


def _remove(base_fd: int, name: str) -> None:
    """Remove `name` and all under it, once a write that had begun in it has ended."""
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=base_fd)
    except FileNotFoundError:
        return  # removed by another pass meanwhile
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        os.unlink(name, dir_fd=base_fd)  # a link or a file where a directory was
        return
    try:
        with locked(fd):
            shutil.rmtree(name, dir_fd=base_fd)
    finally:
        os.close(fd)


def prune_workspaces(base: Path, before: datetime) -> int:
    """Remove every file (links and special files too) last modified before `before`, in
    every workspace, then the folders left empty; returns how many files went. A workspace
    that cannot be pruned is logged and skipped, so the others still are."""
    cutoff = before.timestamp()
    removed = 0
    with _opened(base) as base_fd:
        if base_fd is None:
            return 0
        for name in os.listdir(base_fd):
            try:
                if name.startswith(TRASH_PREFIX):
                    _remove(base_fd, name)
                elif SESSION_DIR.fullmatch(name):
                    removed += _prune(base_fd, name, cutoff)
            except OSError as exc:
                log.warning("retention: could not prune the workspace %s: %s", name, exc)
    return removed


def _prune(base_fd: int, name: str, cutoff: float) -> int:
    try:
        root = os.open(name, DIR_FLAGS, dir_fd=base_fd)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR):
            return 0  # gone meanwhile, or not a directory: no workspace of Parley's
        raise
    try:
        with locked(root):
            removed = _old_files(root, cutoff)
            if not os.listdir(root) and _still_named(base_fd, name, root):
                os.rmdir(name, dir_fd=base_fd)
        return removed
    finally:
        os.close(root)


def _still_named(base_fd: int, name: str, fd: int) -> bool:
    """Whether `name` is still the directory `fd` is (not renamed away meanwhile)."""
    try:
        named = os.lstat(name, dir_fd=base_fd)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def _old_files(root: int, cutoff: float) -> int:
    """Deepest folders first, so a folder is looked at once its own are done."""
    removed = 0
    walk = os.fwalk(".", dir_fd=root, topdown=False, follow_symlinks=False)
    for _, folders, files, dir_fd in walk:
        for entry in folders + files:  # a link to a folder is among the folders
            try:
                info = os.lstat(entry, dir_fd=dir_fd)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(info.st_mode):
                try:
                    os.rmdir(entry, dir_fd=dir_fd)
                except OSError as exc:
                    if exc.errno not in LEFT_FULL:
                        raise
            elif info.st_mtime < cutoff:
                os.unlink(entry, dir_fd=dir_fd)
                removed += 1
    return removed
