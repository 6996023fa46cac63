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
text (`bot.files.voice`), and only the message's other files go on to `accept`. What a
platform calls a recording but whose bytes are no sound is refused as such, not read as
whatever its bytes are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
        self.voice = voice  # None: voice notes are answered with `NO_BACKEND`

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

    async def accept(self, files: Sequence[Arrived], lane: str) -> list[FileRef]:
        """Each file checked, made ready and stored, in order, in `lane` (the sender's);
        Refused for the first that is not, before any is stored."""
        self.check_sizes([(f.name, len(f.data)) for f in files])
        stored = await self.readers.read(lane, files, "people")
        return [_ref(kept, arrived.name) for kept, arrived in zip(stored, files, strict=True)]


def _ref(kept: Stored, name: str) -> FileRef:
    return FileRef(sha256=kept.sha256, media_type=kept.media_type, name=name, size=kept.size,
                   extract=kept.extract)  # fmt: skip


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
