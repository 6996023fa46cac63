"""Files by content: `<root>/<first two hex digits>/<SHA-256>`, written once, removed once no
recorded message carries them (`bot.store.archive` says which).

The name is the hash of the bytes, so a file sent twice (an album forwarded again, the same
screenshot in two chats) is stored once and a reference can never point at other bytes. A
file is written under a temporary name and renamed into place, so a worker killed mid-write
leaves no half file behind a valid name. The calls are blocking file I/O: callers on an
event loop run them in a thread (`asyncio.to_thread`).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from bot.vocabulary.files import FileRef


class FileMissing(LookupError):
    """A reference whose file is not in the store (removed by retention, or another
    machine's store)."""


class FileStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes, media_type: str, name: str = "") -> FileRef:
        """Store `data` (if it is not there yet) and return its reference."""
        sha256 = hashlib.sha256(data).hexdigest()
        target = self.path(sha256)
        if not target.exists():
            _write(target, data)
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


def _write(target: Path, data: bytes) -> None:
    """`data` at `target`, under a temporary name first (see the module docstring)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
