"""An image made ready for the models: its type from its bytes, kept as it is when it fits,
scaled, turned upright and encoded again when not, and refused with a reason when broken,
not an image, or a bomb."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from bot.files.images import (
    MAX_ENCODED,
    MAX_PIXELS,
    NotAnImage,
    media_type,
    prepare,
)
from bot.vocabulary.files import LONG_EDGE
from tests.support.images import image_bytes, png_claiming


def test_an_image_that_fits_is_kept_byte_for_byte() -> None:
    data = image_bytes((640, 480), "PNG")
    ready = prepare(data)
    assert (ready.data, ready.media_type, ready.width, ready.height) == (
        data, "image/png", 640, 480,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "expected"),
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")],
)
def test_the_type_comes_from_the_bytes(kind: str, expected: str) -> None:
    assert media_type(image_bytes((8, 8), kind)) == expected
    assert prepare(image_bytes((8, 8), kind)).media_type == expected


def test_a_large_photo_is_scaled_to_the_long_edge_as_jpeg() -> None:
    ready = prepare(image_bytes((2400, 1800), "JPEG"))
    assert ready.media_type == "image/jpeg"
    assert max(ready.width, ready.height) == LONG_EDGE
    with Image.open(io.BytesIO(ready.data)) as scaled:
        assert (scaled.format, scaled.size) == ("JPEG", (ready.width, ready.height))
        assert scaled.size == (LONG_EDGE, LONG_EDGE * 3 // 4)


def test_a_photo_stored_sideways_is_turned_upright() -> None:
    """EXIF orientation 6: the camera's pixels are landscape, the photo is portrait."""
    ready = prepare(image_bytes((800, 600), "JPEG", orientation=6))
    assert (ready.width, ready.height) == (600, 800)
    with Image.open(io.BytesIO(ready.data)) as upright:
        assert upright.getexif().get(0x0112, 1) == 1


def test_a_large_transparent_image_stays_transparent() -> None:
    shade = Image.linear_gradient("L").resize((2000, 1500))
    logo = Image.merge("RGBA", (shade, shade, shade, shade))  # see-through at the top
    out = io.BytesIO()
    logo.save(out, "PNG")
    ready = prepare(out.getvalue())
    assert ready.media_type == "image/png"
    with Image.open(io.BytesIO(ready.data)) as scaled:
        assert scaled.mode == "RGBA" and max(scaled.size) == LONG_EDGE


def test_a_transparent_image_too_large_as_png_becomes_a_jpeg_on_white() -> None:
    """Noise does not compress: as a PNG it would pass what the APIs take."""
    ready = prepare(image_bytes((2000, 1500), "PNG", mode="RGBA"))
    assert ready.media_type == "image/jpeg" and max(ready.width, ready.height) == LONG_EDGE
    assert len(ready.data) < MAX_ENCODED


def test_a_bomb_is_refused_from_its_header() -> None:
    bomb = png_claiming(30_000, 30_000)
    assert len(bomb) < 200
    assert MAX_PIXELS < 30_000 * 30_000
    with pytest.raises(NotAnImage, match="30000×30000 pixels"):
        prepare(bomb)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"%PDF-1.7\n" + b"x" * 100, "not an image that can be read"),
        (b"\x00" * 64, "not an image that can be read"),
        (image_bytes((800, 600), "JPEG")[:2000], "damaged"),
    ],
    ids=["pdf", "zeros", "truncated"],
)
def test_what_is_not_a_whole_image_is_refused_with_a_reason(data: bytes, said: str) -> None:
    with pytest.raises(NotAnImage, match=said):
        prepare(data)
    if said != "damaged":
        assert media_type(data) is None
