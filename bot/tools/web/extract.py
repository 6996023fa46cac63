"""A fetched page as text for the model: the article of an HTML page, other text as it is.

HTML pages are mostly navigation, ads and footers; trafilatura finds the main text, and
when it finds no article (a list, a form, a bare page) its plain-text mode gives all of the
page's text instead of nothing. Images, PDFs and other binaries are refused by their media
type before their bodies are read: the model could do nothing with the bytes.
trafilatura is imported at the first page, in the tool's thread: a worker that never
fetches one starts without it.
"""

from __future__ import annotations

from bot.tools.base import ToolError
from bot.tools.web.page import HTML, TEXT, Page, is_json


def decode(page: Page) -> str:
    """The body as text in its declared charset, else UTF-8; bad bytes replaced."""
    try:
        return page.body.decode(page.charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return page.body.decode("utf-8", errors="replace")


def looks_like_html(body: bytes) -> bool:
    start = body[:512].lstrip().lower()
    return start.startswith((b"<!doctype html", b"<html", b"<head", b"<body"))


def html_text(page: Page) -> tuple[str | None, str]:
    """The page's title and main text."""
    import trafilatura  # noqa: PLC0415 (see the module's docstring)

    html = decode(page)
    document = trafilatura.bare_extraction(
        html, url=page.url, with_metadata=True, include_comments=False, include_tables=True
    )
    title = getattr(document, "title", None) if document is not None else None
    text = getattr(document, "text", None) if document is not None else None
    if not text:
        text = trafilatura.html2txt(html)
    return title, (text or "").strip()


def render(page: Page) -> str:
    """What web_fetch returns: the title and URL, the text, and a note if it was cut."""
    media_type = page.media_type
    if not media_type and looks_like_html(page.body):
        media_type = "text/html"
    title: str | None = None
    if media_type in HTML:
        title, text = html_text(page)
    elif media_type in TEXT or is_json(media_type):
        text = decode(page)
    else:
        raise ToolError(f"{page.url} did not say what it is (no Content-Type); not read.")
    lines = [f"Title: {title}"] if title else []
    lines += [f"URL: {page.url}", "", text or "(the page has no text)"]
    if page.cut:
        lines += ["", f"[cut: the page is longer than {len(page.body):,} bytes, which were read]"]
    return "\n".join(lines)
