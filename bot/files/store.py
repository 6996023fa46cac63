"""Files by content: `<root>/<first two hex digits>/<SHA-256>`, written once, removed once no
recorded message carries them (`bot.store.archive` says which).

The name is the hash of the bytes (`bot.files.by_content`), so a file sent twice (an album
forwarded again, the same screenshot in two chats) is stored once and a reference can never
point at other bytes. The files that arrive are stored by the reader process that made them
ready (`bot.files.reader`); the calls here are blocking file I/O: callers on an event loop
run them in a thread (`asyncio.to_thread`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from bot.files import by_content
from bot.vocabulary.files import FileRef


class FileMissing(LookupError):
    """A reference whose file is not in the store (removed by retention, or another
    machine's store)."""


class FileStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, sha256: str) -> Path:
        return by_content.path(self.root, sha256)

    def put(self, data: bytes, media_type: str, name: str = "") -> FileRef:
        """Store `data` (if it is not there yet) and return its reference."""
        sha256 = by_content.write_once(self.root, data)
        return FileRef(sha256=sha256, media_type=media_type, name=name, size=len(data))

    def remove(self, hashes: Iterable[str]) -> int:
        """Remove the files of `hashes` (those no message wants any more); how many were here."""
        removed = 0
        for sha256 in hashes:
            try:
                self.path(sha256).unlink()
            except FileNotFoundError:
                continue
            removed += 1
        return removed

    def read(self, ref: FileRef) -> bytes:
        return self._read(ref.sha256, ref)

    def read_extract(self, ref: FileRef) -> bytes:
        """The text taken out of the file when it arrived (a PDF's)."""
        if ref.extract is None:
            raise FileMissing(f"{ref.name or ref.media_type} has no text taken out of it")
        return self._read(ref.extract, ref)

    def _read(self, sha256: str, ref: FileRef) -> bytes:
        try:
            return self.path(sha256).read_bytes()
        except FileNotFoundError:
            name = ref.name or ref.media_type
            raise FileMissing(f"file {sha256[:12]} ({name}) is gone") from None
