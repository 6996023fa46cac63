"""Files as they arrive from any platform, checked and stored before a message is queued.

Cheap checks first, on what the platform said and the bytes' length: how many files, how
large each, how large all of them (`PARLEY_MAX_FILES`, `PARLEY_MAX_FILE_MB`,
`PARLEY_MAX_TURN_MB`). Then each file's type, from its bytes, and the image made ready
(`bot.files.images`), in a thread, at most `BUSY` at once per process: a burst of large
photos waits its turn instead of taking every core, and the event loop never decodes. A
refusal names the file and says what to send instead; nothing is stored for a message that
is refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.config.settings import Settings
from bot.files.store import FileStore
from bot.vocabulary.files import FileRef

if TYPE_CHECKING:
    from bot.files.images import Prepared

BUSY = 2  # images decoded at once in one process
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


class Intake:
    def __init__(self, store: FileStore, limits: Limits) -> None:
        self.store = store
        self.limits = limits
        self._busy = asyncio.Semaphore(BUSY)

    def check_sizes(self, sizes: Sequence[tuple[str, int]]) -> None:
        """Refuse by count and size alone, before anything is downloaded or decoded:
        (name, bytes) of each file, as the platform announced them."""
        limits = self.limits
        if len(sizes) > limits.files:
            raise TooLarge(f"{len(sizes)} files in one message; at most {limits.files} are read")
        for name, size in sizes:
            if size <= 0:
                raise Refused(f"{_called(name)} is empty")
            if size > limits.file_bytes:
                raise TooLarge(
                    f"{_called(name)} is {_mb(size)}; files of at most {_mb(limits.file_bytes)} "
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
                image = await asyncio.to_thread(_prepare, arrived.data)
            if isinstance(image, str):
                raise Refused(f"{_called(arrived.name)}: {image}")
            ready.append(image)
        refs = []
        for arrived, image in zip(files, ready, strict=True):
            put = self.store.put
            refs.append(await asyncio.to_thread(put, image.data, image.media_type, arrived.name))
        return refs


def _prepare(data: bytes) -> Prepared | str:
    """The image made ready, or why it cannot be (run in a thread)."""
    from bot.files import images  # noqa: PLC0415 (Pillow loads with the first file)

    try:
        return images.prepare(data)
    except images.NotAnImage as exc:
        return str(exc)


def _called(name: str) -> str:
    return f"“{name}”" if name else "the file"


def _mb(size: int) -> str:
    return f"{size / MB:.1f} MB" if size < 10 * MB else f"{size // MB} MB"
