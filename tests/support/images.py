"""Images made with Pillow for the tests of what people send: real files of each kind, and
the bad ones a person could send (broken, a bomb that claims a huge canvas)."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image


def image_bytes(
    size: tuple[int, int], kind: str = "PNG", mode: str = "RGB", orientation: int = 1
) -> bytes:
    """An image of `size` pixels, noisy enough not to shrink to nothing when compressed."""
    picture = Image.effect_noise(size, 64).convert(mode)
    out = io.BytesIO()
    exif = Image.Exif()
    if orientation != 1:
        exif[0x0112] = orientation
    picture.save(out, kind, exif=exif) if orientation != 1 else picture.save(out, kind)
    return out.getvalue()


def png_claiming(width: int, height: int) -> bytes:
    """A one-pixel PNG whose header says it is `width`×`height`: a few dozen bytes that
    would take gigabytes to decode."""
    real = image_bytes((1, 1))
    start = real.index(b"IHDR")
    header = struct.pack(">II", width, height) + real[start + 12 : start + 17]
    crc = struct.pack(">I", zlib.crc32(b"IHDR" + header))
    return real[: start + 4] + header + crc + real[start + 21 :]
