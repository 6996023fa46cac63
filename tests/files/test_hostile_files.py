"""Files made to hurt a reader (`tests.fakes.hostile_files`) are refused in one sentence that
names the file, quickly and with nothing stored; what no format's bound catches is stopped by
the reader process's own limits; and a heavy file waits in its sender's lane alone."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from PIL import Image

from bot.files.intake import Arrived, Intake, Limits, Refused
from bot.files.reading import Readers, ReadLimits
from tests.fakes import hostile_files
from tests.support.images import image_bytes


def gradient_png(side: int) -> bytes:
    """A PNG of `side`×`side` pixels, small on the wire, slow and large to decode."""
    picture = Image.linear_gradient("L").resize((side, side)).convert("RGB")
    out = io.BytesIO()
    picture.save(out, "PNG")
    return out.getvalue()


def stored_files(root: Path) -> list[Path]:
    return [path for path in root.rglob("*") if path.is_file()]


@pytest.mark.parametrize("bomb", sorted(hostile_files.ALL))
async def test_every_hostile_file_is_refused_by_name_with_nothing_stored(
    tmp_path: Path, bomb: str
) -> None:
    name, data = hostile_files.ALL[bomb]()
    intake = Intake(Readers(tmp_path, ReadLimits()), Limits())
    with pytest.raises(Refused) as refused:
        await intake.accept([Arrived(image_bytes((8, 8)), "fine.png"), Arrived(data, name)], "p")
    said = str(refused.value)
    assert said.startswith(f"“{name}”: "), said
    assert "\n" not in said and "Traceback" not in said and "Error" not in said
    assert stored_files(tmp_path) == []


async def test_a_file_past_the_reader_s_memory_is_refused_as_such(tmp_path: Path) -> None:
    big = gradient_png(7000)  # 147 MB once decoded
    readers = Readers(tmp_path, ReadLimits(memory_mb=128))
    with pytest.raises(Refused, match=r"“big\.png”: reading it takes more than the 128 MB"):
        await Intake(readers, Limits()).accept([Arrived(big, "big.png")], "p")


async def test_a_file_past_the_reader_s_time_is_refused_as_such(tmp_path: Path) -> None:
    slow = hostile_files.docx_long(20_000)
    readers = Readers(tmp_path, ReadLimits(seconds=0.05))
    with pytest.raises(Refused, match=r"“long\.docx”: it took (longer than|more than) 0\.05 s"):
        await Intake(readers, Limits()).accept([Arrived(slow, "long.docx")], "p")


async def test_a_recording_whose_bytes_are_no_sound_is_refused_as_such(tmp_path: Path) -> None:
    name, data = hostile_files.voice_that_is_png()
    intake = Intake(Readers(tmp_path, ReadLimits()), Limits())
    with pytest.raises(Refused, match=r"“voice\.ogg” is not a recording that can be heard"):
        await intake.hear([Arrived(data, name, recording=True)])


async def test_a_heavy_file_waits_in_its_sender_s_lane_alone(tmp_path: Path) -> None:
    """Two people's heavy files in flight at the defaults: a third person's photo is read
    while both still are, and the first person's next message waits behind their own."""
    readers = Readers(tmp_path, ReadLimits())
    heavy = Arrived(gradient_png(7000), "heavy.png")
    photo = Arrived(image_bytes((64, 48)), "photo.png")
    first = asyncio.create_task(readers.read("ann", [heavy], "people"))
    second = asyncio.create_task(readers.read("bob", [heavy], "people"))
    ann_again = asyncio.create_task(readers.read("ann", [photo], "people"))
    await asyncio.sleep(0.05)  # the heavy ones started
    await readers.read("cat", [photo], "people")
    assert not first.done() and not second.done()
    assert not ann_again.done()  # behind Ann's own heavy file
    await asyncio.gather(first, second, ann_again)
