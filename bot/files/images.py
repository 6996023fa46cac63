"""An image a person sent, made ready for the models: its type read from its bytes (never from
its name), decoded whole to prove it is one, and made to fit what the APIs take.

Anthropic scales an image whose long edge passes 1568 px down itself, after the upload and
at the person's expense in time; both APIs refuse one past 5 MB (Anthropic) or 20 MB
(OpenAI). So a larger image is scaled here, once, as it arrives, turned upright by its EXIF
orientation (phones store photos sideways and say so), and encoded again: JPEG for a photo,
PNG where it is transparent. What fits already is kept byte for byte.

Decoding is CPU work a person controls, so it never runs on an event loop (`bot.files.intake`
calls it in a thread) and is bounded before it starts: an image of more than `MAX_PIXELS`
pixels is refused from its header alone, whatever its file size (a decompression bomb is a
small file that claims a huge canvas). A large JPEG is decoded straight at a fraction of its
size (`Image.draft`), which costs a fraction of the memory and time.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from PIL import Image, ImageOps, UnidentifiedImageError

from bot.vocabulary.files import LONG_EDGE

MAX_PIXELS = 50_000_000  # a 48-megapixel phone photo passes; Pillow's own bomb limit is 89 M
MAX_ENCODED = 3_900_000  # bytes: under Anthropic's 5 MB once in base64
ORIENTATION = 0x0112  # the EXIF tag
# Pillow's own bomb check (a warning from 89 M pixels, an error from 178 M) is replaced by
# `prepare`'s, which refuses from 50 M with a sentence, before any pixel is decoded.
Image.MAX_IMAGE_PIXELS = None
FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


class NotAnImage(ValueError):
    """Bytes that are no image the models read; the text is for the person who sent them."""


@dataclass(frozen=True)
class Prepared:
    data: bytes
    media_type: str
    width: int
    height: int
    text: None = None  # an image has no text taken out of it (`documents.Document` may)


def media_type(data: bytes) -> str | None:
    """The image type `data` really is (from its header), or None if it is none we read."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            return FORMATS.get(image.format or "")
    except (UnidentifiedImageError, OSError):
        return None


def prepare(data: bytes) -> Prepared:
    """`data` checked and made to fit (see the module doc); NotAnImage says why not."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            kind = FORMATS.get(image.format or "")
            if kind is None:
                raise NotAnImage(f"{image.format} images are not read; send PNG, JPEG, GIF or WebP")
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise NotAnImage(
                    f"the image is {width}×{height} pixels; at most {MAX_PIXELS // 1_000_000}"
                    " megapixels are read"
                )
            if _fits(image, len(data)):
                image.load()  # decoded whole: a broken or truncated file fails here
                return Prepared(data, kind, width, height)
            return _scaled(image)
    except UnidentifiedImageError:
        raise NotAnImage("not an image that can be read; send PNG, JPEG, GIF or WebP") from None
    except OSError as exc:  # truncated or corrupt data
        raise NotAnImage(f"the image is damaged ({exc})") from None


def _fits(image: Image.Image, size: int) -> bool:
    upright = image.getexif().get(ORIENTATION, 1) in (0, 1)
    return max(image.size) <= LONG_EDGE and size <= MAX_ENCODED and upright


def _scaled(image: Image.Image) -> Prepared:
    """The image upright, its long edge at most `LONG_EDGE`, encoded again (the first frame
    of an animation)."""
    image.draft("RGB", (LONG_EDGE, LONG_EDGE))  # JPEG only: decode at 1/2, 1/4 or 1/8
    upright = ImageOps.exif_transpose(image)
    upright.thumbnail((LONG_EDGE, LONG_EDGE), Image.Resampling.LANCZOS)
    transparent = upright.mode in ("RGBA", "LA", "PA") or "transparency" in upright.info
    if transparent:
        data = _encoded(upright.convert("RGBA"), "PNG")
        if len(data) <= MAX_ENCODED:
            return Prepared(data, "image/png", *upright.size)
        upright = _flattened(upright.convert("RGBA"))
    data = _encoded(upright.convert("RGB"), "JPEG", quality=85)
    return Prepared(data, "image/jpeg", *upright.size)


def _flattened(image: Image.Image) -> Image.Image:
    """A transparent image on white: a PNG too large to send becomes a JPEG."""
    white = Image.new("RGB", image.size, (255, 255, 255))
    white.paste(image, mask=image.getchannel("A"))
    return white


def _encoded(image: Image.Image, kind: str, **options: int) -> bytes:
    out = io.BytesIO()
    image.save(out, kind, optimize=True, **options)
    return out.getvalue()
