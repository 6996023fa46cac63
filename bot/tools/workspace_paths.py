"""Where a session's workspace is, and how a path in it is opened without leaving it.

The model names files with relative paths, and other people or programs may put things into
a workspace too (an operator, a sandbox that shares the volume). So a path is checked twice:
first as text (no absolute paths, no `..` above the workspace, no NUL or control characters,
bounded lengths), then while it is opened, one component at a time, each relative to the
directory fd before it, with `O_NOFOLLOW`. No symlink is ever followed, wherever it points,
and there is no moment between a check and a use: a component swapped for a symlink after
the text was checked still fails to open.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from bot.tools.base import ToolError

MAX_PATH = 1024  # bytes of UTF-8 in a whole path
MAX_NAME = 255  # bytes of UTF-8 in one component: the common NAME_MAX
MAX_DIRNAME = 200  # longer encoded session keys are named by their hash instead
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
PLAIN = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


def session_dirname(session_key: str) -> str:
    """The directory name of a session: lower-case letters, digits, `_` and `-` as they are,
    every other byte as `%XX`. Decoding is unambiguous, so two keys never share a name, even
    on a file system that ignores case; the name has no `.` and no separator, so it is never
    `..` nor a path. A key too long for a name is named by its SHA-256 after a `=`, a mark
    the encoding never makes."""
    encoded = "".join(
        chr(byte) if chr(byte) in PLAIN else f"%{byte:02X}"
        for byte in session_key.encode("utf-8", "surrogatepass")
    )
    if encoded and len(encoded) <= MAX_DIRNAME:
        return encoded
    return "=" + hashlib.sha256(session_key.encode("utf-8", "surrogatepass")).hexdigest()


def parse_path(path: str) -> tuple[str, ...]:
    """The components of `path` inside the workspace (empty for the workspace itself), or a
    ToolError saying what is wrong with it. `a/../b` is `b`; `..` above the top is refused."""
    if "\0" in path:
        raise ToolError("Refused: the path contains a NUL byte.")
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise ToolError("Refused: the path contains control characters (a newline or a tab).")
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH:
        raise ToolError(f"Refused: the path is longer than {MAX_PATH} bytes.")
    if path.startswith("/"):
        raise ToolError(f"Refused: {path!r} is absolute; paths are relative to the workspace.")
    if path.startswith("~"):
        raise ToolError(
            f"Refused: {path!r}: ~ is not expanded; paths are relative to the workspace."
        )
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise ToolError(f"Refused: {path!r} leads outside the workspace.")
            parts.pop()
            continue
        if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME:
            raise ToolError(f"Refused: a name in {path!r} is longer than {MAX_NAME} bytes.")
        parts.append(part)
    return tuple(parts)


def shown(parts: tuple[str, ...]) -> str:
    """A path as the model should write it again."""
    return "/".join(parts) or "."


def _kind(dir_fd: int, name: str) -> str:
    """What is at `name`, for an error message only (never to decide what to open)."""
    try:
        mode = os.lstat(name, dir_fd=dir_fd).st_mode
    except OSError:
        return "missing"
    if stat.S_ISLNK(mode):
        return "a symbolic link (links are not followed)"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISREG(mode):
        return "a file"
    return "not a regular file (a device, FIFO or socket)"


def refusal(dir_fd: int, name: str, where: str, exc: OSError) -> ToolError:
    """The one-line error for an `open` of `name` in `dir_fd` that failed."""
    if exc.errno == errno.ENOENT:
        return ToolError(f"Not found: {where} does not exist in the workspace.")
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EISDIR, errno.ENXIO):
        return ToolError(f"Refused: {where} is {_kind(dir_fd, name)}.")
    if exc.errno == errno.ENAMETOOLONG:
        return ToolError(f"Refused: {where} is too long for the file system.")
    return ToolError(f"Cannot open {where}: {exc.strerror}.")


def workspace_of(base: Path, session_key: str) -> Path:
    """Where the session's workspace is (whether it exists yet or not): its directory in
    `base`, the operator's PARLEY_WORKSPACE_DIR."""
    return base / session_dirname(session_key)


def workspace_root(folder: Path) -> int | None:
    """An fd of the workspace `folder` (`workspace_of`), or None while it does not exist.
    Its parent, the operator's PARLEY_WORKSPACE_DIR, may itself be a link (a mounted
    volume); the session's directory in it may not."""
    try:
        base_fd = os.open(folder.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        name = folder.name
        return (
            open_dir(base_fd, name, "the workspace", create=False)
            if _exists(base_fd, name)
            else None
        )
    finally:
        os.close(base_fd)


def make_workspace(folder: Path) -> int:
    """`workspace_root`, made (mode 0700) if it does not exist yet: on a first write."""
    os.makedirs(folder.parent, mode=0o700, exist_ok=True)
    base_fd = os.open(folder.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return open_dir(base_fd, folder.name, "the workspace", create=True)
    finally:
        os.close(base_fd)


def _exists(dir_fd: int, name: str) -> bool:
    try:
        os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    return True


def open_dir(dir_fd: int, name: str, where: str, *, create: bool) -> int:
    """An fd of the directory `name` in `dir_fd`, never through a link; made when `create`."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        if not create:
            raise refusal(dir_fd, name, where, FileNotFoundError(errno.ENOENT, "")) from None
    except OSError as exc:
        raise refusal(dir_fd, name, where, exc) from None
    with contextlib.suppress(FileExistsError):  # made meanwhile by another call: fine
        os.mkdir(name, 0o700, dir_fd=dir_fd)
    try:
        return os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise refusal(dir_fd, name, where, exc) from None


@contextlib.contextmanager
def directory(root_fd: int, parts: tuple[str, ...], *, create: bool = False) -> Iterator[int]:
    """An fd of the directory `parts` under the workspace, walked one component at a time;
    its missing directories are made when `create`."""
    fd = os.dup(root_fd)
    try:
        for depth, name in enumerate(parts, 1):
            child = open_dir(fd, name, shown(parts[:depth]), create=create)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def regular_file(dir_fd: int, name: str, where: str) -> Iterator[tuple[int, os.stat_result]]:
    """An fd of the regular file `name` for reading, and its fstat. Opened with
    `O_NONBLOCK` so that a FIFO cannot hang the call; fstat of the fd opened, not of a
    name, decides that it is a regular file."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise refusal(dir_fd, name, where, exc) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise ToolError(f"Refused: {where} is a directory; list_files shows what is in it.")
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"Refused: {where} is not a regular file (a device, FIFO or socket).")
        if info.st_nlink > 1:  # a hard link someone made to a file elsewhere
            raise ToolError(f"Refused: {where} has other hard links, so it may be outside.")
        yield fd, info
    finally:
        os.close(fd)
