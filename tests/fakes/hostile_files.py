"""Files made to hurt a reader, built by code rather than kept as binaries: each is small on the
wire and costly to read naively (a decompression bomb, a billion laughs, a page tree sharing one
heavy stream), or broken in a way a library raises something unexpected for. The tests of
Parley's file intake, its HTTP and chat doors and the benchmarks send these.

Each maker returns `(name, bytes)`; `ALL` names every one, for tests that try them all.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Callable

from PIL import Image


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def _png_with(chunks: list[bytes]) -> bytes:
    """A 4×4 PNG with `chunks` (already framed) put before its image data."""
    out = io.BytesIO()
    Image.new("RGB", (4, 4), (200, 30, 30)).save(out, "PNG")
    png = out.getvalue()
    idat = png.index(b"IDAT") - 4
    return png[:idat] + b"".join(chunks) + png[idat:]


def png_ztxt_bomb() -> tuple[str, bytes]:
    """A zTXt chunk that inflates to 5 MB, some 5 KB on the wire."""
    body = b"Comment\x00\x00" + zlib.compress(b"A" * 5_000_000, 9)
    return "ztxt.png", _png_with([_png_chunk(b"zTXt", body)])


def png_iccp_bomb() -> tuple[str, bytes]:
    """A colour profile (iCCP) that inflates to 5 MB."""
    body = b"icc\x00\x00" + zlib.compress(b"\x00" * 5_000_000, 9)
    return "iccp.png", _png_with([_png_chunk(b"iCCP", body)])


def png_many_texts() -> tuple[str, bytes]:
    """70 compressed text chunks of almost 1 MB each: 70 MB of text from 70 KB."""
    chunk = b"Comment\x00\x00" + zlib.compress(b"B" * 1_000_000, 9)
    return "texts.png", _png_with([_png_chunk(b"zTXt", chunk)] * 70)


def png_truncated() -> tuple[str, bytes]:
    """A PNG cut in the middle of its image data."""
    out = io.BytesIO()
    Image.effect_noise((64, 64), 60).save(out, "PNG")
    return "cut.png", out.getvalue()[:-40]


def _docx(document_xml: bytes) -> bytes:
    """A Word package with `document_xml` as its main part."""
    types = (
        b'<?xml version="1.0" encoding="UTF-8"?>'
        b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        b'<Default Extension="xml" ContentType="application/xml"/>'
        b'<Default Extension="rels" '
        b'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        b'<Override PartName="/word/document.xml" ContentType="application/'
        b'vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
    )
    rels = (
        b'<?xml version="1.0" encoding="UTF-8"?>'
        b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as package:
        package.writestr("[Content_Types].xml", types)
        package.writestr("_rels/.rels", rels)
        package.writestr("word/document.xml", document_xml)
    return out.getvalue()


W = b'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def docx_broken_xml() -> tuple[str, bytes]:
    """A Word document whose main part stops in the middle of an element."""
    return "broken.docx", _docx(b"<w:document " + W + b"><w:body><w:p><w:r><w:t>Hel")


def docx_billion_laughs() -> tuple[str, bytes]:
    """A main part whose DOCTYPE defines an entity that expands to a billion `lol`s."""
    entities = b'<!ENTITY lol "lol">' + b"".join(
        b'<!ENTITY lol%d "%s">' % (n, (b"&lol%d;" % (n - 1) if n > 1 else b"&lol;") * 10)
        for n in range(1, 10)
    )
    xml = (
        b'<?xml version="1.0"?><!DOCTYPE w:document [' + entities + b"]>"
        b"<w:document " + W + b"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p>"
        b"</w:body></w:document>"
    )
    return "laughs.docx", _docx(xml)


def docx_long(lines: int) -> bytes:
    """An honest Word document of `lines` numbered paragraphs: slow to read when long."""
    body = b"".join(b"<w:p><w:r><w:t>line %d of a long document</w:t></w:r></w:p>" % n
                    for n in range(lines))  # fmt: skip
    return _docx(b"<w:document " + W + b"><w:body>" + body + b"</w:body></w:document>")


def docx_tiny_paragraphs() -> tuple[str, bytes]:
    """50 MB of one-letter paragraphs, some 150 KB packed."""
    paragraph = b"<w:p><w:r><w:t>a</w:t></w:r></w:p>"
    body = paragraph * (50_000_000 // len(paragraph))
    return "paragraphs.docx", _docx(
        b"<w:document " + W + b"><w:body>" + body + b"</w:body></w:document>"
    )


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of these objects (1 is the catalog), with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _stream(data: bytes) -> bytes:
    packed = zlib.compress(data, 9)
    return (
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed + b"\nendstream"
    )


def _pdf_pages(count: int, contents: list[int], first: int) -> list[bytes]:
    """The catalog, the page tree and `count` pages, each drawing the objects `contents`;
    the pages' own objects are numbered from `first`."""
    kids = b" ".join(b"%d 0 R" % (first + n) for n in range(count))
    refs = b" ".join(b"%d 0 R" % number for number in contents)
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [" + refs + b"]"
        b" /Resources << /Font << /F1 " + font + b" >> >> >>"
    )
    return [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % count,
            *[page] * count]  # fmt: skip


def pdf_heavy(pages: int = 100, page_bytes: int = 30_000) -> bytes:
    """An honest PDF that is slow to read: `pages` pages of some `page_bytes` of drawing
    instructions each, each drawing a short word (a table of numbers, say)."""
    objects = _pdf_pages(pages, [], 3)
    line = b"BT /F1 9 Tf %d %d Td (%d) Tj ET\n"
    for n in range(pages):
        lines = (
            line % (20 + (k % 9) * 60, 700 - (k % 60) * 11, k) for k in range(page_bytes // 36)
        )
        objects.append(_stream(b"".join(lines)))
        objects[2 + n] = objects[2 + n].replace(
            b"/Contents []", b"/Contents %d 0 R" % (3 + pages + n)
        )
    return _pdf(objects)


def pdf_inflating_stream() -> tuple[str, bytes]:
    """One page whose content stream inflates to 20 MB of text operators."""
    ops = b"BT /F1 12 Tf 72 700 Td (aaaaaaaaaaaaaaaa) Tj ET\n"
    content = _stream(ops * (20_000_000 // len(ops)))
    return "inflating.pdf", _pdf([*_pdf_pages(1, [4], 3), content])


def pdf_shared_stream() -> tuple[str, bytes]:
    """100 pages that all draw the same 1 MB content stream: 100 MB of work from some 20 KB."""
    ops = b"BT /F1 12 Tf 72 700 Td (bbbbbbbbbbbbbbbb) Tj ET\n"
    content = _stream(ops * (1_000_000 // len(ops)))
    return "shared.pdf", _pdf([*_pdf_pages(100, [103], 3), content])


def voice_that_is_png() -> tuple[str, bytes]:
    """A voice note whose bytes are the zTXt bomb: what a recording claims is not trusted."""
    return "voice.ogg", png_ztxt_bomb()[1]


BOMBS: dict[str, Callable[[], tuple[str, bytes]]] = {
    "png zTXt bomb": png_ztxt_bomb,
    "png iCCP bomb": png_iccp_bomb,
    "png 70 text chunks": png_many_texts,
    "docx broken XML": docx_broken_xml,
    "docx billion laughs": docx_billion_laughs,
    "docx tiny paragraphs": docx_tiny_paragraphs,
    "pdf inflating stream": pdf_inflating_stream,
    "pdf shared stream": pdf_shared_stream,
}
ALL: dict[str, Callable[[], tuple[str, bytes]]] = {**BOMBS, "png truncated": png_truncated}
