"""Decoding images and PDFs the way the real APIs do, shared by the checks and the recordings.

Both APIs look at the bytes, not only at the declared type: a PNG sent as `image/jpeg` is
refused. So the fake decodes strictly (standard alphabet, padding required, no whitespace)
and identifies the bytes by their signature.
"""

from __future__ import annotations

import base64
import binascii
from typing import NamedTuple

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
SIGNATURES: dict[str, tuple[bytes, ...]] = {
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/gif": (b"GIF87a", b"GIF89a"),
}
PDF_SIGNATURE = b"%PDF-"


class DataURL(NamedTuple):
    """A `data:<mime>;base64,<data>` URL, split (the data still encoded)."""

    mime: str
    data: str


def decode(data: str) -> bytes | None:
    """The bytes of standard base64 `data`, or None if it is not valid base64."""
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):  # ValueError: characters outside ASCII
        return None


def sniff(raw: bytes) -> str | None:
    """The image type the bytes really are (by their signature), or None if none we know."""
    for mime, signatures in SIGNATURES.items():
        if raw.startswith(signatures):
            return mime
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return None


def is_pdf(raw: bytes) -> bool:
    return raw.startswith(PDF_SIGNATURE)


def data_url(url: str) -> DataURL | None:
    """`url` split into its MIME type and base64 data, or None if it is no base64 data URL."""
    if not url.startswith("data:"):
        return None
    head, comma, data = url[len("data:") :].partition(",")
    mime, _, encoding = head.partition(";")
    if not comma or encoding != "base64":
        return None
    return DataURL(mime, data)
