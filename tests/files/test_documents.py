"""Documents read for the models: a PDF's text page by page, text files by their name's type,
and a clear reason for a PDF that is locked, damaged or too long, or bytes that are no text."""

from __future__ import annotations

import pytest

from bot.files.documents import MAX_PAGES, NotADocument, is_pdf, read_pdf, read_text
from tests.support.documents import pdf_bytes


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
