"""A document a person sent, read for the models: a PDF, whose text is taken out page by page
(for the models that are not sent the PDF itself), a Word document (.docx), whose text is
all any model is sent, or a text file (plain text, CSV, JSON, Markdown, code), which must be
UTF-8.

A PDF is refused in one sentence when it is damaged, locked with a password, or longer than
`MAX_PAGES` (what Anthropic takes in one request). pypdf bounds what one compressed stream
may inflate to, so a PDF bomb fails here too; a .docx is a zip, refused before it is opened
when its parts would unpack to more than `MAX_UNPACKED`. Like an image, a document is read in
a thread (`bot.files.intake`), never on an event loop.
"""

from __future__ import annotations

import codecs
import io
import zipfile
from dataclasses import dataclass

from pypdf import PdfReader
from pypdf.errors import PyPdfError

MAX_PAGES = 100
MAX_UNPACKED = 100 * 1024 * 1024  # what a .docx's parts may unpack to, together
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
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


def is_docx(data: bytes) -> bool:
    """A zip holding a Word document's main part."""
    if not data.startswith(b"PK\x03\x04"):
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as packed:
            return "word/document.xml" in packed.namelist()
    except (zipfile.BadZipFile, OSError):
        return False


def read_docx(data: bytes) -> Document:
    """The Word document with its text: its paragraphs, and its tables a row to a line."""
    from docx import Document as Word  # noqa: PLC0415 (its XML library loads with the first)

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as packed:
            unpacked = sum(part.file_size for part in packed.infolist())
        if unpacked > MAX_UNPACKED:
            raise NotADocument("the document unpacks to more than 100 MB; it is not read")
        word = Word(io.BytesIO(data))
        lines = [paragraph.text for paragraph in word.paragraphs]
        for table in word.tables:
            lines += ["\t".join(cell.text for cell in row.cells) for row in table.rows]
    except NotADocument:
        raise
    except (zipfile.BadZipFile, ValueError, KeyError, OSError):  # what a broken file raises
        raise NotADocument("the Word document is damaged and cannot be read") from None
    return Document(data, DOCX, "\n".join(line for line in lines if line.strip()))


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
