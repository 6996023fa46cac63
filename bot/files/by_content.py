"""Bytes kept under their SHA-256 (`<root>/<first two hex digits>/<SHA-256>`), written once.

The one rule of the file store (`bot.files.store`), apart so that a reader process
(`bot.files.reader`) stores what it made ready without loading the records every other part
passes around. A file is written under a temporary name and renamed into place, so a process
killed mid-write leaves no half file behind a valid name.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def path(root: Path, sha256: str) -> Path:
    return root / sha256[:2] / sha256


def write_once(root: Path, data: bytes) -> str:
    """`data` under `root` (unless it is there already); its SHA-256."""
    sha256 = hashlib.sha256(data).hexdigest()
    target = path(root, sha256)
    if not target.exists():
        _write(target, data)
    return sha256


def _write(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
