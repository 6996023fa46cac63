"""How Telegram is sent a file: a photo only where Telegram takes the bytes as one (a JPEG, PNG
or WebP of at most 10 MB, sides adding up to 10,000 px at most, 20:1 at most), else a
document; a caption cut to the 1,024 UTF-16 units Telegram counts."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from adapters.telegram.uploads import PHOTO_BYTES, caption, upload_of
from bot.files.store import FileStore
from tests.support.images import image_bytes


@pytest.mark.parametrize(
    ("made", "media_type", "kind"),
    [  # images are made by the test that uses them, not by each pytest worker as it collects
        (((800, 600), "PNG"), "image/png", "image"),
        (((800, 600), "JPEG"), "image/jpeg", "image"),
        (((800, 600), "GIF"), "image/gif", "document"),  # it would be a still
        (((2100, 100), "PNG"), "image/png", "document"),  # 21:1
        (((6000, 4100), "JPEG"), "image/jpeg", "document"),  # 10,100 px of sides
        (b"a,b\n1,2\n", "text/csv", "document"),
        (b"\x89PNG but not one", "image/png", "document"),
    ],
)
def test_a_photo_only_where_telegram_takes_one(
    tmp_path: Path, made: bytes | tuple[tuple[int, int], str], media_type: str, kind: str
) -> None:
    data = made if isinstance(made, bytes) else image_bytes(*made)
    store = FileStore(tmp_path)
    ref = store.put(data, media_type, "f")
    assert upload_of(store, ref).kind == kind


def test_an_image_past_10_mb_is_a_document(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    data = image_bytes((3000, 3000), "PNG")
    assert len(data) > PHOTO_BYTES  # noise does not compress
    ref = store.put(data, "image/png", "big.png")
    kept = upload_of(store, ref)
    assert (kept.data, kept.kind) == (data, "document")
    assert ref.sha256 == hashlib.sha256(data).hexdigest()


def test_a_caption_is_cut_in_utf_16_units() -> None:
    assert caption("") is None
    assert caption("a" * 2000) == "a" * 1024
    assert caption("😀" * 600) == "😀" * 512  # two units each
