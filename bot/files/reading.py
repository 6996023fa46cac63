"""Reading files in reader processes, one lane per person: what every file that comes in (a
person's, or one a tool made) goes through before it is stored.

Each message's files are read by a reader process of their own (`bot.files.reader`), whose
memory and CPU are bounded (`PARLEY_FILE_READ_MB`, `PARLEY_FILE_READ_SECONDS` per file) and
which is killed with its process group past the same seconds of wall clock. Nothing of a file
is decoded, parsed or inflated in Parley's own processes, so a file no bound foresaw costs its
reader alone: the event loop, the other turns and the process's memory do not see it.

People read side by side, each in a lane: one person's files are read one message at a
time, in order, while other people's are read beside them, `PARLEY_FILE_READERS` at most
at once in one process. So two heavy PDFs from two people hold two readers, and a third
person's photo takes a third at once instead of waiting behind them; and a reader that keeps
the CPU for long lowers its own priority, giving the cores to the quick ones.

A reader that says no, runs out of time, CPU or memory, or fails in any other way, is one
sentence naming the file (`Refused`), never an exception that would make a platform hand the
update over again: a file is read at most once per delivery.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import bot
from bot.files import children
from bot.files.reader import DAMAGED, MAX_JOB, Purpose
from bot.files.spare import Spare

if TYPE_CHECKING:
    from bot.config.settings import Settings

log = logging.getLogger(__name__)
MB = 1024 * 1024

LINE = 64 * 1024  # bytes of one line of the reader's answer
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")  # no secret reaches a reader


class Refused(ValueError):
    """A file (or a message's files) not taken; the text is for the person who sent it."""


class TooLarge(Refused):
    """Refused for its size or the number of files."""


class NotRead(Refused):
    """A file a reader did not take, and why (`why`, without the file's name)."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(f"{called(name)}: {why}")
        self.why = why


@dataclass(frozen=True)
class ReadLimits:
    """What one reader may use: seconds per file (CPU, and wall clock), memory (MB of address
    space), and how many readers one process runs at once."""

    seconds: float = 20.0
    memory_mb: int = 512
    at_once: int = 4

    @classmethod
    def of(cls, settings: Settings) -> ReadLimits:
        return cls(settings.file_read_seconds, settings.file_read_mb, settings.file_readers)


@dataclass(frozen=True)
class Arrived:
    """One file as a platform (or a tool) handed it over: its bytes, the name it was sent
    with, and whether the platform said it is a recording (a voice note, an audio file)."""

    data: bytes
    name: str = ""
    recording: bool = False


@dataclass(frozen=True)
class Stored:
    """A file the reader made ready and stored: its hash, type, size, and its text's hash."""

    sha256: str
    media_type: str
    size: int
    extract: str | None = None


@dataclass(frozen=True)
class Limits:
    files: int = 10
    file_bytes: int = 20 * MB
    turn_bytes: int = 50 * MB

    @classmethod
    def of(cls, settings: Settings) -> Limits:
        return cls(
            settings.max_files, int(settings.max_file_mb * MB), int(settings.max_turn_mb * MB)
        )


class Readers:
    """Runs the reader processes of one Parley process; see the module docstring."""

    def __init__(self, store: Path, limits: ReadLimits, *, ahead: bool = False) -> None:
        """`ahead`: keep a reader started ahead of the next file (`bot.files.spare`), for a
        process that lives on; `aclose` ends it."""
        self.store = store.resolve()  # the reader starts where this process is
        self.limits = limits
        self._spare = Spare(partial(_started, ahead=True), _started) if ahead else None
        self._slots = asyncio.Semaphore(limits.at_once)
        self._lanes: dict[str, asyncio.Lock] = {}
        self._waiting: Counter[str] = Counter()

    async def aclose(self) -> None:
        if self._spare is not None:
            await self._spare.aclose()

    async def read(self, lane: str, files: Sequence[Arrived], purpose: Purpose) -> list[Stored]:
        """`files` read for `purpose` and stored, in order, in `lane`'s turn (the person's);
        Refused, naming the file, for the first that is not taken, with none stored."""
        async with self.lane(lane):
            return await self.read_in_lane(files, purpose)

    async def read_in_lane(self, files: Sequence[Arrived], purpose: Purpose) -> list[Stored]:
        """As `read`, by a caller that holds its lane already (`lane`)."""
        if not files:
            return []
        async with self._slots:
            return await self._run(files, purpose)

    @contextlib.asynccontextmanager
    async def lane(self, lane: str) -> AsyncIterator[None]:
        """`lane`'s turn: one message's files at a time, in the order they came."""
        lock = self._lanes.setdefault(lane, asyncio.Lock())
        self._waiting[lane] += 1
        try:
            async with lock:
                yield
        finally:
            self._waiting[lane] -= 1
            if not self._waiting[lane]:
                del self._waiting[lane], self._lanes[lane]

    async def _run(self, files: Sequence[Arrived], purpose: Purpose) -> list[Stored]:
        limits = self.limits
        job = json.dumps({
            "purpose": purpose, "store": str(self.store), "seconds": limits.seconds,
            "memory_mb": limits.memory_mb,
            "files": [{"name": f.name, "size": len(f.data)} for f in files],
        }).encode() + b"\n"  # fmt: skip
        if len(job) > MAX_JOB:
            raise Refused("the files' names are too long")
        process = await (self._spare.take() if self._spare is not None else _started())
        feeding = asyncio.create_task(_feed(process, job, files))
        errors = asyncio.create_task(_tail(process.stderr))
        answer = _Answer()
        try:
            await answer.follow(process, limits.seconds)
        except TimeoutError:
            answer.why = f"it took longer than {limits.seconds:g} s to read"
        finally:
            feeding.cancel()
            children.kill(process)  # ended already, or past its time
            await process.wait()
        name = files[answer.at].name if answer.at < len(files) else ""
        tail = await errors
        if answer.stored is not None:
            return answer.stored
        raise NotRead(name, answer.why or self._failure(process, tail))

    def _failure(self, process: asyncio.subprocess.Process, errors: bytes) -> str:
        """Why a reader that gave no answer ended: its CPU time, its memory (a decoder that
        aborted when an allocation failed), or anything else, which the log keeps."""
        code = process.returncode or 0
        if code in (-signal.SIGXCPU, -signal.SIGKILL):
            return f"it took more than {self.limits.seconds:g} s of processing to read"
        log.warning("a reader ended with %s: %s", code, errors.decode(errors="replace")[-300:])
        if code < 0:
            return f"reading it takes more than the {self.limits.memory_mb} MB a file may use"
        return DAMAGED


async def _started(ahead: bool = False) -> asyncio.subprocess.Process:
    """A reader process, waiting for its job (its libraries loaded first when `ahead`)."""
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot.files.reader", *(["--ahead"] if ahead else []),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True, env=environment(),
        limit=LINE,
    )  # fmt: skip


class _Answer:
    """What a reader said, line by line: the file it was at, and its last word."""

    def __init__(self) -> None:
        self.at = 0
        self.stored: list[Stored] | None = None
        self.why = ""

    async def follow(self, process: asyncio.subprocess.Process, seconds: float) -> None:
        """Read the answer to its end, each file within `seconds` of wall clock."""
        assert process.stdout is not None
        async with asyncio.timeout(seconds) as clock:
            while line := await process.stdout.readline():
                try:
                    self._take(json.loads(line))
                except (ValueError, TypeError, KeyError):  # not an answer: the reader failed
                    self.stored, self.why = None, DAMAGED
                    return
                clock.reschedule(asyncio.get_running_loop().time() + seconds)

    def _take(self, said: dict[str, Any]) -> None:
        if "reading" in said:
            self.at = int(said["reading"])
        elif "refused" in said:
            self.at, self.why = int(said["refused"]), str(said["why"])[:500]
        elif "stored" in said:
            self.stored = [Stored(**stored) for stored in said["stored"]]


async def _feed(process: asyncio.subprocess.Process, job: bytes, files: Sequence[Arrived]) -> None:
    """The job and the files' bytes on the reader's stdin, as fast as it takes them; a reader
    that stopped reading (it refused a file) is left alone."""
    stdin = process.stdin
    assert stdin is not None
    with contextlib.suppress(ConnectionError):
        stdin.write(job)
        for file in files:
            data = memoryview(file.data)
            for start in range(0, len(data), children.CHUNK):  # never copied whole
                stdin.write(data[start : start + children.CHUNK])
                await stdin.drain()
        stdin.close()


async def _tail(stream: asyncio.StreamReader | None) -> bytes:
    """The last of what the reader writes on stderr, read as it comes so it never blocks."""
    assert stream is not None
    kept = bytearray()
    while chunk := await stream.read(children.CHUNK):
        kept += chunk
        del kept[:-4096]
    return bytes(kept)


def environment() -> dict[str, str]:
    """A reader's environment (this module's, and any child that reads what people send):
    the locale and path, and where Parley's code is, never the deployment's secrets."""
    kept = {name: os.environ[name] for name in KEPT_ENV if name in os.environ}
    code = str(Path(bot.__file__).resolve().parent.parent)
    kept["PYTHONPATH"] = os.pathsep.join(filter(None, [code, os.environ.get("PYTHONPATH")]))
    return kept


def called(name: str) -> str:
    """A file as a refusal names it: its name in quotes, or "the file"."""
    return f"“{name}”" if name else "the file"


def check_sizes(limits: Limits, sizes: Sequence[tuple[str, int]]) -> None:
    """Refuse by count and size alone, before anything is downloaded or decoded: (name,
    bytes) of each file, as the platform announced them."""
    if len(sizes) > limits.files:
        raise TooLarge(f"{len(sizes)} files in one message; at most {limits.files} are read")
    for name, size in sizes:
        if size <= 0:
            raise Refused(f"{called(name)} is empty")
        if size > limits.file_bytes:
            raise TooLarge(
                f"{called(name)} is {_mb(size)}; files of at most {_mb(limits.file_bytes)} are read"
            )
    total = sum(size for _, size in sizes)
    if total > limits.turn_bytes:
        raise TooLarge(
            f"the files come to {_mb(total)}; at most {_mb(limits.turn_bytes)} per message"
        )


def _mb(size: int) -> str:
    return f"{size / MB:.1f} MB" if size < 10 * MB else f"{size // MB} MB"
