"""Files as they arrive from any platform, checked and stored before a message is queued.

Cheap checks first, on what the platform said and the bytes' length: how many files, how
large each, how large all of them (`PARLEY_MAX_FILES`, `PARLEY_MAX_FILE_MB`,
`PARLEY_MAX_TURN_MB`). Then each file's type, from its bytes, and the file made ready: an
image scaled (`bot.files.images`), a PDF's text taken out or a text file read
(`bot.files.documents`), in a thread, at most `BUSY` at once per process: a burst of large
photos waits its turn instead of taking every core, and the event loop never decodes. A
refusal names the file and says what to send instead; nothing is stored for a message that
is refused.

Sound (a voice note, an audio file, a video note) is not stored for a model, none of which
Parley sends sound to: it is heard (`hear`), its transcript becoming part of the message's
text (`bot.files.voice`), and only the message's other files go on to `accept`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.config.settings import Settings
from bot.files import audio
from bot.files.store import FileStore
from bot.files.voice import NO_BACKEND, NotHeard, Transcriber
from bot.vocabulary.files import FileRef

if TYPE_CHECKING:
    from bot.files.documents import Document
    from bot.files.images import Prepared

BUSY = 2  # files made ready at once in one process
UNREAD = "this kind of file is not read; send an image, a PDF, a Word document or a text file"
MB = 1024 * 1024


class Refused(ValueError):
    """A file (or a message's files) not taken; the text is for the person who sent it."""


class TooLarge(Refused):
    """Refused for its size or the number of files."""


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


@dataclass(frozen=True)
class Arrived:
    """One file as a platform handed it over: its bytes and the name it was sent with."""

    data: bytes
    name: str = ""


@dataclass(frozen=True)
class Heard:
    """A message's files once its sound was heard: what was said in each recording, in
    order, and the files that are no sound."""

    said: list[str]
    files: list[Arrived]


class Intake:
    def __init__(self, store: FileStore, limits: Limits, voice: Transcriber | None = None) -> None:
        self.store = store
        self.limits = limits
        self.voice = voice  # None: voice notes are answered with `NO_BACKEND`
        self._busy = asyncio.Semaphore(BUSY)

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
        """Refuse by count and size alone, before anything is downloaded or decoded:
        (name, bytes) of each file, as the platform announced them."""
        limits = self.limits
        if len(sizes) > limits.files:
            raise TooLarge(f"{len(sizes)} files in one message; at most {limits.files} are read")
        for name, size in sizes:
            if size <= 0:
                raise Refused(f"{called(name)} is empty")
            if size > limits.file_bytes:
                raise TooLarge(
                    f"{called(name)} is {_mb(size)}; files of at most {_mb(limits.file_bytes)} "
                    "are read"
                )
        total = sum(size for _, size in sizes)
        if total > limits.turn_bytes:
            raise TooLarge(
                f"the files come to {_mb(total)}; at most {_mb(limits.turn_bytes)} per message"
            )

    async def accept(self, files: Sequence[Arrived]) -> list[FileRef]:
        """Each file checked, made ready and stored, in order; Refused for the first that is
        not, before any is stored."""
        self.check_sizes([(f.name, len(f.data)) for f in files])
        ready = []
        for arrived in files:
            async with self._busy:
                made = await asyncio.to_thread(_made_ready, arrived)
            if isinstance(made, str):
                raise Refused(f"{called(arrived.name)}: {made}")
            ready.append(made)
        return [
            await asyncio.to_thread(self._stored, made, arrived.name)
            for arrived, made in zip(files, ready, strict=True)
        ]

    def _stored(self, made: Prepared | Document, name: str) -> FileRef:
        """The file in the store, and a PDF's text beside it (its reference's `extract`)."""
        ref = self.store.put(made.data, made.media_type, name)
        text = made.text
        if text is None:
            return ref
        extract = self.store.put(text.encode(), "text/plain")
        return ref.model_copy(update={"extract": extract.sha256})


def _made_ready(arrived: Arrived) -> Prepared | Document | str:
    """The image made ready or the document read, or why neither can be (run in a thread)."""
    from bot.files import documents, images  # noqa: PLC0415 (loaded with the first file)

    data = arrived.data
    try:
        if images.media_type(data) is not None:
            return images.prepare(data)
        if documents.is_pdf(data):
            return documents.read_pdf(data)
        if documents.is_docx(data):
            return documents.read_docx(data)
    except (images.NotAnImage, documents.NotADocument) as exc:
        return str(exc)
    text = documents.read_text(data, arrived.name)
    return text if text is not None else UNREAD


def kind_of(data: bytes) -> str:
    """What stored bytes are, from the bytes, as a Content-Type (run in a thread)."""
    from bot.files import documents, images  # noqa: PLC0415 (loaded with the first file)

    if (image := images.media_type(data)) is not None:
        return image
    if documents.is_pdf(data):
        return documents.PDF
    if documents.is_docx(data):
        return documents.DOCX
    if documents.read_text(data, "") is not None:
        return "text/plain; charset=utf-8"
    return "application/octet-stream"


def called(name: str) -> str:
    """A file as a refusal names it: its name in quotes, or "the file"."""
    return f"“{name}”" if name else "the file"


def _mb(size: int) -> str:
    return f"{size / MB:.1f} MB" if size < 10 * MB else f"{size // MB} MB"
