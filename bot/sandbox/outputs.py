"""The files a program leaves in `./out/`, taken out of the sandbox once nothing else runs there.

The working directory is a file system in memory that vanishes with the run, so what the
program wrote for the person must be copied out before: the sandbox's first process (its
init) does it after the program ended and it killed whatever the program left running, so
no process of the program can swap a file for a link while it is read. It opens the run's
`out` directory on the host before it enters the sandbox's root and keeps that descriptor,
which the program never has (it closes every descriptor before it starts). Only regular
files at the top of `./out/` are taken, opened without following a link, in the order of
their names, `MAX_FILES` at most; names that are hidden or not printable are left. Their
sizes are bounded by the working directory's own size (`limits.SCRATCH_MB`).

The worker then reads them from the host directory in a thread (`read`), before the run's
directory is removed.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field

OUT = "out"  # in the working directory
MAX_FILES = 10
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
CHUNK = 1 << 20


@dataclass(frozen=True)
class OutFile:
    name: str
    data: bytes = field(repr=False)


def _names(dir_fd: int) -> list[str]:
    return sorted(n for n in os.listdir(dir_fd) if not n.startswith(".") and n.isprintable())


@contextlib.contextmanager
def _regular(dir_fd: int, name: str) -> Iterator[int | None]:
    """An fd of `name` if it is a regular file (never through a link), else None."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        yield None
        return
    try:
        yield fd if stat.S_ISREG(os.fstat(fd).st_mode) else None
    finally:
        os.close(fd)


def take_out(scratch: str, destination: int) -> int:
    """Copy the files of `scratch`/out into the directory `destination` (an fd); how many
    more files were there than were taken. Runs in the init, as root of the sandbox."""
    try:
        source = os.open(os.path.join(scratch, OUT), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return 0  # no ./out/: nothing to send
    taken = left = 0
    try:
        for name in _names(source):
            with _regular(source, name) as fd:
                if fd is None:
                    continue
                if taken == MAX_FILES:
                    left += 1
                    continue
                _copy(fd, name, destination)
                taken += 1
    finally:
        os.close(source)
    return left


def _copy(fd: int, name: str, destination: int) -> None:
    out = os.open(name, WRITE_FLAGS, 0o600, dir_fd=destination)
    try:
        while chunk := os.read(fd, CHUNK):
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view) :]
    finally:
        os.close(out)


def read(folder: str) -> list[OutFile]:
    """The files the init copied into `folder` (on the host), by name (run in a thread)."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return []
    files: list[OutFile] = []
    try:
        for name in _names(dir_fd)[:MAX_FILES]:
            with _regular(dir_fd, name) as fd:
                if fd is None:
                    continue
                chunks = []
                while chunk := os.read(fd, CHUNK):
                    chunks.append(chunk)
                files.append(OutFile(name, b"".join(chunks)))
    finally:
        os.close(dir_fd)
    return files
