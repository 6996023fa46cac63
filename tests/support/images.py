"""Images made with Pillow for the tests of what people send: real files of each kind, and
the bad ones a person could send (broken, a bomb that claims a huge canvas); and the settings
that make pictures at the fake model API's images endpoint (`image_env`)."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image

from tests.fakes.llm import OPENAI_KEY, FakeLLM


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


def image_env(fake: FakeLLM, model: str = "gpt-image-1") -> dict[str, str]:
    """The settings that offer `generate_image` at the fake's images endpoint."""
    return {
        "PARLEY_IMAGE_MODEL": model,
        "PARLEY_IMAGE_BASE_URL": fake.openai_base_url,
        "PARLEY_IMAGE_API_KEY": OPENAI_KEY,
    }
