"""Files checked and stored as they arrive: refused by count and size before any work,
refused by name when one cannot be read, nothing stored for a refused message."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.files.intake import MB, Arrived, Intake, Limits, Refused, TooLarge
from bot.files.reading import Readers, ReadLimits
from tests.support.images import image_bytes

SMALL = Limits(files=2, file_bytes=1 * MB, turn_bytes=int(1.5 * MB))


def stored_files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


async def test_images_are_stored_in_order_and_named(tmp_path: Path) -> None:
    intake = Intake(Readers(tmp_path, ReadLimits()), Limits())
    png, jpeg = image_bytes((40, 30), "PNG"), image_bytes((30, 40), "JPEG")
    refs = await intake.accept([Arrived(png, "a.png"), Arrived(jpeg, "b.jpg")], "tg:1")
    assert [(r.name, r.media_type, r.size) for r in refs] == [
        ("a.png", "image/png", len(png)),
        ("b.jpg", "image/jpeg", len(jpeg)),
    ]
    assert len(stored_files(tmp_path)) == 2


@pytest.mark.parametrize(
    ("sizes", "said"),
    [
        ([("a", 10), ("b", 10), ("c", 10)], "3 files in one message; at most 2 are read"),
        ([("big.png", 2 * MB)], "“big.png” is 2.0 MB; files of at most 1.0 MB are read"),
        ([("a", MB), ("b", MB)], "the files come to 2.0 MB; at most 1.5 MB per message"),
    ],
)
def test_count_and_sizes_are_refused_before_any_work(
    tmp_path: Path, sizes: list[tuple[str, int]], said: str
) -> None:
    with pytest.raises(TooLarge) as refused:
        Intake(Readers(tmp_path, ReadLimits()), SMALL).check_sizes(sizes)
    assert str(refused.value) == said


async def test_one_bad_file_refuses_the_message_and_stores_nothing(tmp_path: Path) -> None:
    intake = Intake(Readers(tmp_path, ReadLimits()), Limits())
    good = Arrived(image_bytes((40, 30)), "fine.png")
    with pytest.raises(Refused, match=r"“invoice\.pdf”: the PDF is damaged"):
        await intake.accept([good, Arrived(b"%PDF-1.7\n%...", "invoice.pdf")], "tg:1")
    with pytest.raises(Refused, match=r"“empty\.png” is empty"):
        await intake.accept([good, Arrived(b"", "empty.png")], "tg:1")
    assert stored_files(tmp_path) == []
