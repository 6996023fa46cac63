"""A growing reply cut into Slack messages, without ever taking back what was shown.

Slack takes at most 12,000 characters of markdown per message, and a streamed message only
grows: text appended cannot be moved to the next message later. So pages are cut online, as
the text grows: the last page shows text only up to `HOLD` characters short of its room
until its end is known, which leaves room to find a good place to cut (a blank line, then a
line break, then a space) after everything already shown. A cut prefers places outside code
blocks; a cut inside one closes the block on this page and opens it again, with its
language, on the next, so every page renders on its own. The markdown itself is Slack's to
render (`markdown_text`); nothing here rewrites it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LIMIT = 11_500  # Slack's limit is 12,000: the rest is for a status line and the fences
HOLD = 1_500
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


@dataclass
class Page:
    start: int
    end: int | None = None  # None: the last page, still growing
    opens: str = ""  # a code block's opening line, continued from the previous page
    closes: bool = False  # ends inside a code block, closed here


@dataclass(frozen=True)
class Span:
    """A fenced code block: from its opening line to the end of its closing line."""

    start: int
    end: int
    line: str
    closed: bool = True


def fences(text: str) -> list[Span]:
    spans: list[Span] = []
    pos = 0
    opening: tuple[int, str, str] | None = None  # start, fence, line
    for line in text.splitlines(keepends=True):
        match = FENCE.match(line.rstrip("\r\n"))
        if opening is None:
            if match:
                opening = (pos, match[1], line.strip())
        elif match and _closes(match, opening[1]):
            spans.append(Span(opening[0], pos + len(line), opening[2]))
            opening = None
        pos += len(line)
    if opening is not None:
        spans.append(Span(opening[0], len(text), opening[2], closed=False))
    return spans


def _closes(match: re.Match[str], fence: str) -> bool:
    """A closing fence: the same character, at least as long, and nothing after it."""
    return match[1][0] == fence[0] and len(match[1]) >= len(fence) and not match[2].strip()


def inside(spans: list[Span], pos: int) -> Span | None:
    """The code block a cut at `pos` would fall into, if any."""
    return next((span for span in spans if span.start < pos < span.end), None)


def best_cut(text: str, low: int, high: int) -> int:
    """Where to end a page within [low, high]: after a blank line, a line break or a space
    outside code blocks, else after a line break inside one, else at `high`."""
    spans = fences(text)
    for marker, in_code in (("\n\n", False), ("\n", False), ("\n", True), (" ", False)):
        pos = text.rfind(marker, low, high)
        while pos >= 0:
            cut = pos + len(marker)
            if cut <= high and (inside(spans, cut) is not None) == in_code:
                return cut
            pos = text.rfind(marker, low, pos)
    return high


def closing(body: str) -> str:
    return "```" if body.endswith("\n") else "\n```"


class Pager:
    """The pages of one reply; `cut` cuts them as the text grows (see module docstring)."""

    def __init__(self, limit: int = LIMIT, hold: int = HOLD) -> None:
        self.limit = limit
        self.hold = hold
        self.pages = [Page(0)]

    def room(self, page: Page) -> int:
        return self.limit - len(page.opens) - len("\n```")

    def cut(self, text: str, shown: int) -> None:
        """Cut the last page while it has more text than room. `shown`: how far into the text
        the last page is already shown and cannot be taken back."""
        while True:
            page = self.pages[-1]
            room = self.room(page)
            if len(text) - page.start <= room:
                return
            low = max(shown, page.start + room // 2)
            end = best_cut(text, low, page.start + room)
            block = inside(fences(text), end)
            page.end = end
            page.closes = block is not None
            self.pages.append(Page(end, opens=block.line + "\n" if block else ""))
            shown = end

    def visible(self, text: str, *, complete: bool) -> int:
        """How far into the text the last page may show now: all of it once the text is
        complete, else up to `hold` short of the page's room, so a good cut stays possible."""
        page = self.pages[-1]
        if complete:
            return len(text)
        return min(len(text), page.start + self.room(page) - self.hold)

    def text(self, text: str, index: int, upto: int | None = None) -> str:
        """Page `index` as it is sent: its opening fence, its text, its closing fence."""
        page = self.pages[index]
        end = page.end if page.end is not None else (upto if upto is not None else len(text))
        body = text[page.start : end]
        return page.opens + body + (closing(body) if page.closes else "")
