"""An image a person sent, made ready for the models: its type read from its bytes (never from
its name), decoded whole to prove it is one, and made to fit what the APIs take.

Anthropic scales an image whose long edge passes 1568 px down itself, after the upload and
at the person's expense in time; both APIs refuse one past 5 MB (Anthropic) or 20 MB
(OpenAI). So a larger image is scaled here, once, as it arrives, turned upright by its EXIF
orientation (phones store photos sideways and say so), and encoded again: JPEG for a photo,
PNG where it is transparent. What fits already is kept byte for byte.

Decoding is CPU work a person controls, so it runs in a reader process with limits of its
own (`bot.files.reader`), never in Parley's processes, and is bounded before it starts: an
image of more than `MAX_PIXELS` pixels is refused from its header alone, whatever its file
size (a decompression bomb is a small file that claims a huge canvas). A large JPEG is
decoded straight at a fraction of its size (`Image.draft`), which costs a fraction of the
memory and time. Text and colour profiles packed into a PNG inflate to at most Pillow's own
bounds (1 MB a chunk, 64 MB in all), and passing them refuses the image in a sentence, as
does any other failure of the decoder: what it raises for a hostile file is not only OSError.

What an image is comes from its first bytes alone (`media_type`), without a decoder, so a
file that claims to be a PNG is refused as a damaged PNG, not mistaken for something else.
"""

from __future__ import annotations

import contextlib
import io
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from PIL import Image, ImageOps, UnidentifiedImageError

from bot.vocabulary.image_edge import LONG_EDGE

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


SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def preload() -> None:
    """Load the plugins of the usual formats now (a reader started ahead of its file),
    rather than when the first image is opened."""
    Image.preinit()


def media_type(data: bytes) -> str | None:
    """The image type `data` says it is by its signature, or None if it is none we read."""
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for signature, kind in SIGNATURES if data.startswith(signature)), None)


def prepare(data: bytes) -> Prepared:
    """`data` checked and made to fit (see the module doc); NotAnImage says why not."""
    with _decoding(), Image.open(io.BytesIO(data)) as image:
        kind = _bounded(image)
        if _fits(image, len(data)):
            image.load()  # decoded whole: a broken or truncated file fails here
            return Prepared(data, kind, *image.size)
        return _scaled(image)


def check(data: bytes) -> str:
    """The type of `data`, once decoded whole as it is (an image a tool sends, which is not
    scaled); NotAnImage says why it cannot be."""
    with _decoding(), Image.open(io.BytesIO(data)) as image:
        kind = _bounded(image)
        image.load()
        return kind


def _bounded(image: Image.Image) -> str:
    """The opened image's type, once its format and its size in pixels are ones we read."""
    kind = FORMATS.get(image.format or "")
    if kind is None:
        raise NotAnImage(f"{image.format} images are not read; send PNG, JPEG, GIF or WebP")
    width, height = image.size
    if width * height > MAX_PIXELS:
        raise NotAnImage(
            f"the image is {width}×{height} pixels; at most {MAX_PIXELS // 1_000_000}"
            " megapixels are read"
        )
    return kind


@contextlib.contextmanager
def _decoding() -> Iterator[None]:
    """What Pillow raises for a file it cannot decode, as the sentence for the person."""
    try:
        yield
    except NotAnImage:
        raise
    except UnidentifiedImageError:
        raise NotAnImage("not an image that can be read; send PNG, JPEG, GIF or WebP") from None
    except ValueError as exc:  # Pillow's bounds on what a PNG's chunks inflate to
        if "MAX_TEXT" in str(exc):
            raise NotAnImage("the image carries more packed text than is read") from None
        raise NotAnImage("the image is damaged") from None
    except (OSError, SyntaxError, EOFError, struct.error, IndexError) as exc:
        raise NotAnImage(f"the image is damaged ({_first_line(exc)})") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:120]


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
