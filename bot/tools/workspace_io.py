"""The file operations of a workspace, on directory fds that `workspace_paths` opened safely:
its size for the quota, an atomic replace, and a window of a file read as UTF-8.

Writes of one session take an exclusive `flock` on its workspace directory, so that two
calls at once (two tool threads, or two workers sharing the volume) cannot both pass the
quota with the room only one of them fits in. Retention and deletion take it too before they
remove files (`workspace_upkeep`).
"""

from __future__ import annotations

import codecs
import contextlib
import fcntl
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bot.tools.base import ToolError
from bot.tools.workspace_paths import make_workspace

WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
TEMP_PREFIX = ".parley-write-"
REPLACEMENT = "\ufffd"
BINARY_SHARE = 0.3  # more bytes than this that are not UTF-8: not text in another encoding


@contextlib.contextmanager
def locked(root_fd: int) -> Iterator[None]:
    """Hold the session's write lock. `flock` belongs to the open file description, and each
    call opens the workspace afresh, so calls in threads of one process exclude each other
    as calls in different processes do."""
    fcntl.flock(root_fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(root_fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def writable(folder: Path) -> Iterator[int]:
    """The session's workspace, made if need be, under its write lock. Retention removes a
    workspace it left empty, holding the lock: one removed (or renamed away) while this
    waited is made again, so that a write is never lost in a directory no path leads to."""
    while True:
        root = make_workspace(folder)
        try:
            fcntl.flock(root, fcntl.LOCK_EX)
            if _still_there(folder, root):
                break
        except BaseException:
            os.close(root)
            raise
        os.close(root)  # and with it the lock
    try:
        yield root
    finally:
        os.close(root)


def _still_there(path: Path, fd: int) -> bool:
    try:
        named = os.lstat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def usage(root_fd: int) -> int:
    """Bytes in the workspace: the sizes of everything in it but directories, links not
    followed. Entries that vanish while it counts are skipped."""
    total = 0
    for _, _, names, dir_fd in os.fwalk(".", dir_fd=root_fd, follow_symlinks=False):
        for name in names:
            with contextlib.suppress(FileNotFoundError):
                total += os.lstat(name, dir_fd=dir_fd).st_size
    return total


def existing_size(dir_fd: int, name: str, where: str) -> int:
    """The size of the regular file `name` that a write replaces (0 if there is none); a
    write never replaces a directory, a link or a special file."""
    try:
        info = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return 0
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"Refused: {where} is a directory.")
    if stat.S_ISLNK(info.st_mode):
        raise ToolError(f"Refused: {where} is a symbolic link (links are not followed).")
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"Refused: {where} is not a regular file (a device, FIFO or socket).")
    return info.st_size


def read_all(fd: int) -> bytes:
    """The rest of an open file (for an append; the quota bounds its size)."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def replace(dir_fd: int, name: str, data: bytes) -> None:
    """Make `name` hold `data` at once: written to a new temporary file in the same
    directory, synced, then renamed over `name`. A reader sees the old file or the new one,
    never half of it, and a failed write leaves no temporary file behind."""
    temp = f"{TEMP_PREFIX}{secrets.token_hex(8)}"
    fd = os.open(temp, WRITE_FLAGS, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise
    os.fsync(dir_fd)  # the rename itself survives a crash


@dataclass(frozen=True)
class Window:
    """Part of a file as text: bytes `start` to `end` of `size`, `bad` of them not UTF-8."""

    text: str
    start: int
    end: int
    size: int
    bad: int


def read_window(fd: int, size: int, offset: int, limit: int, where: str) -> Window:
    """At most `limit` bytes from `offset`, cut at whole characters: an offset inside a
    character moves to the next one, and a character the limit would split is left for the
    next window, so the windows of a file join up exactly. Binary data is refused."""
    if offset > size:
        raise ToolError(f"Refused: offset {offset:,} is past the end of {where} ({size:,} bytes).")
    raw = os.pread(fd, limit + 3, offset)
    skip = 0
    while offset and skip < min(3, len(raw)) and 0x80 <= raw[skip] < 0xC0:
        skip += 1
    chunk = raw[skip : skip + limit]
    final = offset + skip + len(chunk) >= size
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text = decoder.decode(chunk, final=final)
    used = len(chunk) - len(decoder.getstate()[0])
    bad = text.count(REPLACEMENT) - chunk.count(REPLACEMENT.encode())
    if b"\0" in chunk or bad > BINARY_SHARE * len(chunk):
        raise ToolError(f"Refused: {where} is binary ({size:,} bytes), not UTF-8 text.")
    return Window(text, offset + skip, offset + skip + used, size, bad)
