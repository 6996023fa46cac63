"""Documents read for the models: a PDF's text page by page, a Word document's paragraphs and
tables, text files by their name's type, and a clear reason for a PDF that is locked,
damaged or too long, a Word document that is damaged or a zip bomb, or bytes that are no
text."""

from __future__ import annotations

import io
import zipfile

import pytest

from bot.files.documents import (
    DOCX,
    MAX_PAGES,
    MAX_UNPACKED,
    NotADocument,
    is_docx,
    is_pdf,
    read_docx,
    read_pdf,
    read_text,
)
from tests.support.documents import docx_bytes, pdf_bytes


def test_a_pdf_s_text_is_taken_out_page_by_page() -> None:
    data = pdf_bytes(["Invoice 7", "Total: 42 EUR"])
    assert is_pdf(data)
    read = read_pdf(data)
    assert (read.data, read.media_type) == (data, "application/pdf")
    assert read.text == "[Page 1]\nInvoice 7\n\n[Page 2]\nTotal: 42 EUR"


def test_a_pdf_with_an_empty_user_password_is_read() -> None:
    read = read_pdf(pdf_bytes(["open to all"], password=""))
    assert read.text == "[Page 1]\nopen to all"


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (pdf_bytes(["secret"], password="hunter2"), "locked with a password"),
        (pdf_bytes(["x"] * (MAX_PAGES + 1)), f"has {MAX_PAGES + 1} pages; at most {MAX_PAGES}"),
        (b"%PDF-1.7\n" + b"\x00garbage" * 50, "damaged"),
        (pdf_bytes(["cut short"])[:300], "damaged"),
    ],
    ids=["locked", "too-long", "garbage", "truncated"],
)
def test_a_pdf_that_cannot_be_read_says_why(data: bytes, said: str) -> None:
    with pytest.raises(NotADocument, match=said):
        read_pdf(data)


@pytest.mark.parametrize(
    ("name", "kind"),
    [("t.csv", "text/csv"), ("d.JSON", "application/json"), ("n.md", "text/markdown"),
     ("main.py", "text/plain"), ("notes", "text/plain")],
)  # fmt: skip
def test_a_text_file_takes_its_type_from_its_name(name: str, kind: str) -> None:
    read = read_text(b"a,b\n1,2\n", name)
    assert read is not None and (read.media_type, read.text) == (kind, None)


def test_bytes_that_are_not_utf8_text_are_no_text_file() -> None:
    assert read_text(b"\xff\xfe\x00a\x00b", "x.txt") is None
    assert read_text(b"a\x00b", "x.txt") is None
    read = read_text(b"\xef\xbb\xbfhello", "bom.txt")
    assert read is not None and read.data == b"hello"


def test_a_word_document_s_paragraphs_and_tables_are_its_text() -> None:
    data = docx_bytes(["Quarterly report", "Sales grew."], [["city", "sales"], ["Porto", "42"]])
    assert is_docx(data) and not is_docx(zipped({"other.xml": b"<x/>"}))
    read = read_docx(data)
    assert (read.data, read.media_type) == (data, DOCX)
    assert read.text == "Quarterly report\nSales grew.\ncity\tsales\nPorto\t42"


def test_a_word_document_that_cannot_be_read_says_why() -> None:
    bomb = zipped({"word/document.xml": b"\x00" * (MAX_UNPACKED + 1)})
    with pytest.raises(NotADocument, match="unpacks to more than 32 MB"):
        read_docx(bomb)
    with pytest.raises(NotADocument, match="damaged"):
        read_docx(zipped({"word/document.xml": b"<not a document"}))
    with pytest.raises(NotADocument, match="damaged"):
        read_docx(docx_bytes(["cut short"])[:200])


def zipped(parts: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as packed:
        for name, data in parts.items():
            packed.writestr(name, data)
    return out.getvalue()
