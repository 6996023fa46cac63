"""A document a person sent, read for the models: a PDF, whose text is taken out page by page
(for the models that are not sent the PDF itself), a Word document (.docx), whose text is
all any model is sent, or a text file (plain text, CSV, JSON, Markdown, code), which must be
UTF-8.

Every format here is a bomb until bounded, so each read is bounded before it costs much:
- a PDF is refused in one sentence when it is damaged, locked with a password, or longer than
  `MAX_PAGES` (what Anthropic takes in one request); each stream may inflate to at most
  `MAX_STREAM`, and the pages' drawing instructions together to at most `MAX_CONTENT`,
  counted per page, so a hundred pages that share one heavy stream count a hundred times
  (taking text out of a page costs time in proportion to them);
- a .docx is a zip whose main part is read as a stream of XML events, its elements dropped as
  soon as their text is taken (a tree of millions of tiny paragraphs would take gigabytes),
  with no DTD loaded and no entity expanded (a billion laughs stays one entity reference);
  its main part may unpack to at most `MAX_UNPACKED`;
- the text taken out of either is at most `MAX_TEXT` characters, more than a model's context
  takes whole.
These run in a reader process with limits of its own (`bot.files.reader`), never in Parley's
processes, so what a bound here misses costs that process alone.
"""

from __future__ import annotations

import codecs
import io
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

MAX_PAGES = 100
MAX_UNPACKED = 32 * 1024 * 1024  # bytes a .docx's main part may unpack to
MAX_STREAM = 8 * 1024 * 1024  # bytes one PDF stream may inflate to
MAX_CONTENT = 8 * 1024 * 1024  # bytes of drawing instructions across a PDF's pages
MAX_TEXT = 1_000_000  # characters of text taken out of a document
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
WORD = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
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
    from pypdf import PdfReader, apply_configuration  # noqa: PLC0415 (loaded with the first)
    from pypdf.errors import LimitReachedError, PyPdfError  # noqa: PLC0415

    try:
        with apply_configuration(
            zlib_maximum_output_length=MAX_STREAM, maximum_declared_stream_length=MAX_STREAM
        ):
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise NotADocument("the PDF is locked with a password; send it unlocked")
            count = len(reader.pages)
            if count > MAX_PAGES:
                raise NotADocument(f"the PDF has {count} pages; at most {MAX_PAGES} are read")
            _check_content(reader)
            said = (f"[Page {n}]\n{page.extract_text().strip()}"
                    for n, page in enumerate(reader.pages, start=1))  # fmt: skip
            pages = _bounded_text(said, between="\n\n")
    except NotADocument:
        raise
    except LimitReachedError:
        mb = MAX_STREAM // (1024 * 1024)
        raise NotADocument(
            f"a part of the PDF unpacks to more than {mb} MB; it is not read"
        ) from None
    except (PyPdfError, ValueError, KeyError, TypeError, OSError):  # what a broken file raises
        raise NotADocument("the PDF is damaged and cannot be read") from None
    return Document(data, PDF, pages)


def _check_content(reader: object) -> None:
    """Refuse a PDF whose pages draw more than `MAX_CONTENT` bytes of instructions, counting
    a stream each time a page draws it, but inflating each only once."""
    from pypdf import PdfReader  # noqa: PLC0415
    from pypdf.generic import ArrayObject, IndirectObject, StreamObject  # noqa: PLC0415

    assert isinstance(reader, PdfReader)
    sizes: dict[int, int] = {}
    total = 0
    for page in reader.pages:
        contents = page.get("/Contents")
        parts = contents if isinstance(contents, ArrayObject) else [contents]
        for part in parts:
            key = part.idnum if isinstance(part, IndirectObject) else id(part)
            if key not in sizes:
                stream = part.get_object() if part is not None else None
                sizes[key] = len(stream.get_data()) if isinstance(stream, StreamObject) else 0
            total += sizes[key]
        if total > MAX_CONTENT:
            raise NotADocument(
                f"the PDF's pages draw more than {MAX_CONTENT // (1024 * 1024)} MB of "
                "instructions; it is not read"
            )


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
    """The Word document with its text: a paragraph to a line, a table's row to a line with
    its cells apart by tabs, in the order they are in the document."""
    from lxml import etree  # noqa: PLC0415 (loaded with the first)

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as packed:
            main = packed.getinfo("word/document.xml")
            if main.file_size > MAX_UNPACKED:
                mb = MAX_UNPACKED // (1024 * 1024)
                raise NotADocument(f"the document unpacks to more than {mb} MB; it is not read")
            with packed.open(main) as xml:
                text = _bounded_text(_docx_lines(xml))
    except NotADocument:
        raise
    except (zipfile.BadZipFile, etree.LxmlError, ValueError, KeyError, OSError, EOFError):
        raise NotADocument("the Word document is damaged and cannot be read") from None
    return Document(data, DOCX, text)


def _docx_lines(xml: IO[bytes]) -> Iterator[str]:
    """The lines of a Word document's main part, read as events (see the module doc)."""
    from lxml import etree  # noqa: PLC0415

    events = etree.iterparse(
        xml, events=("start", "end"), tag=(f"{WORD}p", f"{WORD}tbl", f"{WORD}tr"),
        resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False,
    )  # fmt: skip
    tables = 0
    for event, element in events:
        if element.tag == f"{WORD}tbl":
            tables += 1 if event == "start" else -1
        elif event == "start":
            continue
        elif element.tag == f"{WORD}tr" and tables == 1:
            yield "\t".join(_text(cell) for cell in element.iterchildren(f"{WORD}tc"))
        elif element.tag == f"{WORD}p" and tables == 0:
            yield _text(element)
        else:
            continue  # a paragraph of a cell, read with its row
        element.clear(keep_tail=False)
        while element.getprevious() is not None:
            del element.getparent()[0]


def _text(element: object) -> str:
    """What a paragraph or a cell says: its runs' text, tabs and line breaks."""
    from lxml import etree  # noqa: PLC0415

    assert isinstance(element, etree._Element)
    said = {f"{WORD}tab": "\t", f"{WORD}br": "\n", f"{WORD}cr": "\n"}
    parts = []
    for node in element.iter(f"{WORD}t", f"{WORD}tab", f"{WORD}br", f"{WORD}cr", f"{WORD}p"):
        if node.tag == f"{WORD}t":
            parts.append(node.text or "")
        elif node.tag == f"{WORD}p":
            parts.append("\n" if parts else "")  # a cell's paragraphs, a line each
        else:
            parts.append(said[node.tag])
    return "".join(parts)


def _bounded_text(lines: Iterator[str], between: str = "\n") -> str:
    """The non-blank `lines` joined, or NotADocument once they pass `MAX_TEXT` characters."""
    kept: list[str] = []
    length = 0
    for line in lines:
        if not line.strip():
            continue
        length += len(line) + len(between)
        if length > MAX_TEXT:
            raise NotADocument(
                f"its text is longer than {MAX_TEXT:,} characters; send a part of it"
            )
        kept.append(line)
    return between.join(kept)


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
