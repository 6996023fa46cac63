"""The files a program leaves in `./out/`, taken out of the sandbox once nothing else runs there.

The working directory is a file system in memory that vanishes with the run, so what the
program wrote for the person must be copied out before: the sandbox's first process (its
init) does it after the program ended and it killed whatever the program left running, so
no process of the program can swap a file for a link while it is read. It opens the run's
`out` directory on the host before it enters the sandbox's root and keeps that descriptor,
which the program never has (it closes every descriptor before it starts). Only regular
files at the top of `./out/` are taken, opened without following a link, in the order of
their names; names that are hidden or not printable are left.

What is taken is bounded by the run's `Bound`: so many files (`MAX_FILES`, fewer when the
turn has sent others) and so many bytes in all (the working directory's size,
`limits.SCRATCH_MB`, less what the turn's earlier programs handed back). The working
directory's size does not bound the bytes by itself: a sparse file (`truncate(40_000_000)`)
takes no room in it, and a file linked under ten names takes room once. So the bytes are
counted as they are copied, each name's bytes each time (what is copied is what is sent),
a file that does not fit in what is left is not copied, and the copy stops at the bound.
Those not taken are reported by name, with why (`Unsent`), for the model to read.

The worker then reads them from the host directory in a thread (`read`), before the run's
directory is removed, within the same bound, so it never holds more than the bound in
memory whatever the folder holds.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from bot.sandbox.limits import OUT_FILES, SCRATCH_MB

OUT = "out"  # in the working directory
MAX_FILES = OUT_FILES
MAX_LISTED = 20  # files not taken that the report names; the others are only counted
MB = 1 << 20
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
CHUNK = 1 << 20
Why = Literal["count", "room"]  # past the files a run may hand back, or past its bytes


@dataclass(frozen=True)
class Bound:
    """What one run may hand back: at most `files` files of at most `bytes` bytes in all."""

    files: int = MAX_FILES
    bytes: int = SCRATCH_MB * MB


@dataclass(frozen=True)
class OutFile:
    name: str
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class Unsent:
    """A file of `./out/` that was not taken: its name, its length and why."""

    name: str
    size: int
    why: Why


@dataclass
class Leftovers:
    """The files not taken: the first `MAX_LISTED` by name, then how many more."""

    listed: list[Unsent] = field(default_factory=list)
    unlisted: int = 0

    def add(self, name: str, size: int, why: Why) -> None:
        if len(self.listed) < MAX_LISTED:
            self.listed.append(Unsent(name, size, why))
        else:
            self.unlisted += 1

    def to_json(self) -> dict[str, object]:
        return {"unsent": [[u.name, u.size, u.why] for u in self.listed], "more": self.unlisted}


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


def take_out(scratch: str, destination: int, bound: Bound) -> Leftovers:
    """Copy the files of `scratch`/out into the directory `destination` (an fd), within
    `bound`; those left behind. Runs in the init, as root of the sandbox."""
    left = Leftovers()
    try:
        source = os.open(os.path.join(scratch, OUT), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return left  # no ./out/: nothing to send
    taken, room = 0, bound.bytes
    try:
        for name in _names(source):
            with _regular(source, name) as fd:
                if fd is None:
                    continue
                length = os.fstat(fd).st_size
                if taken == bound.files:
                    left.add(name, length, "count")
                    continue
                copied = _copy(fd, name, destination, room) if length <= room else None
                if copied is None:
                    left.add(name, length, "room")
                    continue
                taken, room = taken + 1, room - copied
    finally:
        os.close(source)
    return left


def _copy(fd: int, name: str, destination: int, most: int) -> int | None:
    """Copy the file into `destination`: how many bytes, or None (and no copy) when it
    holds more than `most`, of which at most one byte more was written."""
    out = os.open(name, WRITE_FLAGS, 0o600, dir_fd=destination)
    copied = 0
    try:
        while copied <= most and (chunk := os.read(fd, min(CHUNK, most - copied + 1))):
            copied += len(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view) :]
    except OSError:
        copied = -1  # the host refused the copy: no half file is sent
        raise
    finally:
        os.close(out)
        if not 0 <= copied <= most:
            os.unlink(name, dir_fd=destination)
    return copied if copied <= most else None


def read(folder: str, bound: Bound) -> tuple[list[OutFile], Leftovers]:
    """The files the init copied into `folder` (on the host), by name, within `bound`, and
    those past it (run in a thread). Never more than the bound is read."""
    left = Leftovers()
    try:
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return [], left
    files: list[OutFile] = []
    room = bound.bytes
    try:
        for name in _names(dir_fd):
            with _regular(dir_fd, name) as fd:
                if fd is None:
                    continue
                length = os.fstat(fd).st_size
                if len(files) == bound.files:
                    left.add(name, length, "count")
                elif length > room:
                    left.add(name, length, "room")
                else:
                    files.append(OutFile(name, _read(fd, length)))
                    room -= len(files[-1].data)
    finally:
        os.close(dir_fd)
    return files, left


def _read(fd: int, length: int) -> bytes:
    """At most `length` bytes of the file."""
    chunks: list[bytes] = []
    while length > 0 and (chunk := os.read(fd, min(CHUNK, length))):
        chunks.append(chunk)
        length -= len(chunk)
    return b"".join(chunks)
