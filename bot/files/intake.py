"""Files as they arrive from any platform, checked and stored before a message is queued.

Cheap checks first, on what the platform said and the bytes' length: how many files, how
large each, how large all of them (`PARLEY_MAX_FILES`, `PARLEY_MAX_FILE_MB`,
`PARLEY_MAX_TURN_MB`). Then each file's type, from its bytes, and the file made ready: an
image scaled (`bot.files.images`), a PDF's or Word document's text taken out or a text file
read (`bot.files.documents`), in a reader process with bounds of its own, in the sender's
lane (`bot.files.reading`): the event loop never decodes, and one person's heavy file never
holds up another's. A refusal names the file and says what to send instead; nothing is
stored for a message that is refused.

Sound (a voice note, an audio file, a video note) is not stored for a model, none of which
Parley sends sound to: it is heard (`hear`), its transcript becoming part of the message's
text (`bot.files.voice`), and only the message's other files go on to `accept`. A message's
files are downloaded, heard and read while `holding` room for them: at most `HELD` messages'
files are in memory at once, each person's in their lane. What a
platform calls a recording but whose bytes are no sound is refused as such, not read as
whatever its bytes are.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import functools
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from bot.files import audio
from bot.files.reading import (
    MB,
    Arrived,
    Limits,
    Readers,
    Refused,
    Stored,
    TooLarge,
    called,
    check_sizes,
)
from bot.files.store import FileStore
from bot.files.voice import NO_BACKEND, NotHeard, Transcriber
from bot.vocabulary.files import FileRef

HELD = 4  # messages' files held in memory at once by one process, read or being read
TRIM_FROM = 1024 * 1024  # bytes of files let go of from which freed memory is given back

__all__ = ["MB", "Arrived", "Heard", "Intake", "Limits", "Refused", "TooLarge", "called"]


@dataclass(frozen=True)
class Heard:
    """A message's files once its sound was heard: what was said in each recording, in
    order, and the files that are no sound."""

    said: list[str]
    files: list[Arrived]


class Intake:
    def __init__(self, readers: Readers, limits: Limits, voice: Transcriber | None = None) -> None:
        self.readers = readers
        self.store = FileStore(readers.store)  # where the readers store what they take
        self.limits = limits
        self._held = asyncio.Semaphore(HELD)
        self.voice = voice  # None: voice notes are answered with `NO_BACKEND`

    @contextlib.asynccontextmanager
    async def holding(self, lane: str) -> AsyncIterator[None]:
        """Room to hold one message's files, from their first byte to their storing: once
        `lane`'s earlier message is through (so one person's messages wait, unread, in
        their own lane), and while fewer than `HELD` are held by this process."""
        async with self.readers.lane(lane), self._held:
            yield

    def check_voice(self, seconds: Sequence[float]) -> None:
        """Refuse recordings before they are downloaded: when nothing transcribes them here,
        or when their platform says one lasts longer than is transcribed."""
        if self.voice is None:
            raise Refused(NO_BACKEND)
        try:
            self.voice.check_length(seconds)
        except NotHeard as exc:
            raise Refused(str(exc)) from None

    async def hear(self, files: Sequence[Arrived]) -> Heard:
        """Each recording among `files` (told from its bytes) transcribed; Refused, with the
        sentence for the person, for the first that cannot be."""
        heard = Heard([], [])
        for arrived in files:
            sound = audio.sniff(arrived.data)
            if sound is None and arrived.recording:
                raise Refused(f"{called(arrived.name)} is not a recording that can be heard")
            if sound is None:
                heard.files.append(arrived)
                continue
            if self.voice is None:
                raise Refused(NO_BACKEND)
            try:
                heard.said.append(await self.voice.transcript(arrived.data, sound))
            except NotHeard as exc:
                raise Refused(str(exc)) from None
        return heard

    def check_sizes(self, sizes: Sequence[tuple[str, int]]) -> None:
        """Refuse by count and size alone (`check_sizes`)."""
        check_sizes(self.limits, sizes)

    async def accept(self, files: Sequence[Arrived], lane: str | None) -> list[FileRef]:
        """Each file checked, made ready and stored, in order, in `lane` (the sender's; None
        when the caller holds it already, `Readers.lane`); Refused for the first that is
        not, before any is stored."""
        self.check_sizes([(f.name, len(f.data)) for f in files])
        if lane is None:
            stored = await self.readers.read_in_lane(files, "people")
        else:
            stored = await self.readers.read(lane, files, "people")
        return [_ref(kept, arrived.name) for kept, arrived in zip(stored, files, strict=True)]


def let_go(files: list[Arrived], heard: Heard | None = None) -> None:
    """Drop a message's files once read, refused or not (and those `heard` kept): a
    refusal's traceback keeps the frames that held them until the cycle collector comes,
    which under a burst of uploads is hundreds of megabytes later. Megabytes of them are
    handed back to the system too (`_trim`)."""
    held = sum(len(file.data) for file in files)
    files.clear()
    if heard is not None:
        heard.files.clear()
    if held >= TRIM_FROM:
        _trim()


def _trim() -> None:
    """glibc keeps the memory a process freed for its next allocations, so a burst of
    uploads would leave the web process at its peak for good; `malloc_trim` gives the free
    pages back (a few milliseconds). Elsewhere than glibc, nothing."""
    if (trim := _malloc_trim()) is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    name = ctypes.util.find_library("c")
    return getattr(ctypes.CDLL(name), "malloc_trim", None) if name else None


def _ref(kept: Stored, name: str) -> FileRef:
    return FileRef(sha256=kept.sha256, media_type=kept.media_type, name=name, size=kept.size,
                   extract=kept.extract)  # fmt: skip


def kind_of(data: bytes) -> str:
    """What stored bytes are, from the bytes, as a Content-Type (run in a thread)."""
    from bot.files import documents, images  # noqa: PLC0415 (loaded with the first file)

    if (image := images.media_type(data)) is not None:
        return image
    if data[:4] == b"OggS" and data[28:36] == b"OpusHead":  # a voice reply
        return "audio/ogg"
    if documents.is_pdf(data):
        return documents.PDF
    if documents.is_docx(data):
        return documents.DOCX
    if documents.read_text(data, "") is not None:
        return "text/plain; charset=utf-8"
    return "application/octet-stream"
