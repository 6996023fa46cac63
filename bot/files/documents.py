"""A document a person sent, read for the models: a PDF, whose text is taken out page by page
(for the models that are not sent the PDF itself), or a text file (plain text, CSV, JSON,
Markdown, code), which must be UTF-8.

A PDF is refused in one sentence when it is damaged, locked with a password, or longer than
`MAX_PAGES` (what Anthropic takes in one request). pypdf bounds what one compressed stream
may inflate to, so a PDF bomb fails here too. Like an image, a document is read in a thread
(`bot.files.intake`), never on an event loop.
"""

from __future__ import annotations

import codecs
import io
from dataclasses import dataclass

from pypdf import PdfReader
from pypdf.errors import PyPdfError

MAX_PAGES = 100
PDF = "application/pdf"
TEXT_TYPES = {
    "csv": "text/csv",
    "json": "application/json",
    "md": "text/markdown",
    "markdown": "text/markdown",
    "html": "text/html",
    "xml": "application/xml",
}


class NotADocument(ValueError):
    """Bytes that are no document the models read; the text is for the person."""


@dataclass(frozen=True)
class Document:
    data: bytes
    media_type: str
    text: str | None  # a PDF's text, taken out; None for a text file, which is its own text


def is_pdf(data: bytes) -> bool:
    return data.startswith(b"%PDF-")


def read_pdf(data: bytes) -> Document:
    """The PDF with its text, page by page under a `[Page N]` line each."""
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise NotADocument("the PDF is locked with a password; send it unlocked")
        count = len(reader.pages)
        if count > MAX_PAGES:
            raise NotADocument(f"the PDF has {count} pages; at most {MAX_PAGES} are read")
        pages = [f"[Page {n}]\n{page.extract_text().strip()}" for n, page in
                 enumerate(reader.pages, start=1)]  # fmt: skip
    except NotADocument:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError):  # what a broken file raises
        raise NotADocument("the PDF is damaged and cannot be read") from None
    return Document(data, PDF, "\n\n".join(pages))


def read_text(data: bytes, name: str) -> Document | None:
    """A UTF-8 text file with the type its name says (plain text otherwise), or None for
    bytes that are not text."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\x00" in text:
        return None
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return Document(data, TEXT_TYPES.get(extension, "text/plain"), None)
