"""A fetched page, and which kinds of page are worth fetching at all.

The media type is judged from the response's headers, before its body is read: an image or
a PDF is refused without downloading it, since the model could do nothing with the bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.tools.base import ToolError

HTML = frozenset({"text/html", "application/xhtml+xml"})
TEXT = frozenset({"text/plain", "text/markdown", "text/x-markdown", "text/csv"})
JSON = frozenset({"application/json", "text/json"})


@dataclass(frozen=True)
class Page:
    """What a fetch got: the final URL, its media type and charset, and the body read."""

    url: str
    media_type: str  # lowercase, without parameters; "" when the server named none
    charset: str | None
    body: bytes
    cut: bool  # the body went on past the byte limit


def is_json(media_type: str) -> bool:
    return media_type in JSON or media_type.endswith("+json")


def refuse_unreadable(media_type: str, where: str) -> None:
    """Refuse a body that is not HTML, text or JSON; an unnamed type is sniffed later."""
    if media_type and media_type not in HTML | TEXT and not is_json(media_type):
        raise ToolError(
            f"{where} is {media_type}, not a web page or text: web_fetch reads HTML, plain "
            "text and JSON only."
        )
