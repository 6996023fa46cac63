"""The file store: bytes by their SHA-256, written once, read back, gone when removed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.files.store import FileMissing, FileStore
from bot.vocabulary.files import FileRef

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def test_a_file_is_stored_under_its_hash_and_read_back(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "files")
    ref = store.put(PNG, "image/png", "shot.png")
    digest = hashlib.sha256(PNG).hexdigest()
    assert ref == FileRef(sha256=digest, media_type="image/png", name="shot.png", size=len(PNG))
    assert ref.is_image
    assert store.path(digest) == tmp_path / "files" / digest[:2] / digest
    assert store.read(ref) == PNG


def test_the_same_bytes_sent_twice_are_one_file(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    first = store.put(PNG, "image/png", "a.png")
    second = store.put(PNG, "image/png", "b.png")
    assert first.sha256 == second.sha256
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [first.sha256]


def test_a_file_that_is_gone_is_said_so_by_name(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    ref = store.put(PNG, "image/png", "shot.png")
    store.path(ref.sha256).unlink()
    with pytest.raises(FileMissing, match=r"shot\.png"):
        store.read(ref)


@pytest.mark.parametrize(
    "fields",
    [
        {"sha256": "../../etc/passwd"},  # a reference names a file only by a hash
        {"sha256": "A" * 64},
        {"size": 0},
        {"media_type": ""},
    ],
)
def test_a_reference_is_parsed_strictly(fields: dict[str, object]) -> None:
    good = {"sha256": "a" * 64, "media_type": "image/png", "name": "x.png", "size": 3}
    with pytest.raises(ValidationError):
        FileRef.model_validate(good | fields)
