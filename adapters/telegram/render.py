"""The model's markdown as Telegram shows it: plain text plus entities, cut into messages.

Entities rather than a MarkdownV2 string because MarkdownV2 must escape eighteen characters
exactly right and a single miss makes Telegram refuse the whole message; text + entities has
nothing to escape, so `_*[]()` in a reply always goes through. Telegram caps a message at 4096
UTF-16 code units and counts entity offsets in those units, so every length here is UTF-16.

A long reply becomes several messages. Each cut is made where a reader least notices it: a
blank line between blocks, else a line break outside code, else a line break inside a code
block too long for one message (each part then carries its own `pre`, so every message shows
a valid code block), else a space, else anywhere between two characters. A code block that
fits one message is never cut. Only the whitespace at a cut is dropped, never text.

Markdown allows raw HTML, which the converter drops: `a <angle> & b` would lose `<angle>`.
A model writing `<angle>` in a chat means those characters, so whatever the parser would read
as HTML is escaped first and shows as written. Only markdown syntax (emphasis marks, fences, link
targets, list and quote markers, entity references such as `&amp;`) is turned into formatting.
"""

from __future__ import annotations

import logging
import re
from bisect import bisect_right
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import pyromark
from telegramify_markdown import RenderConfig, convert

log = logging.getLogger(__name__)

TELEGRAM_LIMIT = 4096

# Whitespace runs that may separate two messages: line breaks apart from other blanks, so a cut
# inside code drops the line break and keeps the next line's indentation.
_RUN = re.compile(r"\n+|[^\S\n]+")
# A closing fence still being typed: while streaming it would flash inside the code block.
_FENCE_TAIL = re.compile(r"\n[ \t]*(?:`{1,2}|~{1,2})\Z")
# Telegram refuses a text_link whose url is neither scheme:... nor a bare domain.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+|[\w-]+(?:\.[\w-]+)+(?:[/?#]\S*)?")
_QUOTES = frozenset({"pre", "code", "blockquote", "expandable_blockquote"})
# The extensions the converter parses with, so HTML is found where it would find it.
_OPTIONS = (
    pyromark.Options.ENABLE_TABLES
    | pyromark.Options.ENABLE_STRIKETHROUGH
    | pyromark.Options.ENABLE_TASKLISTS
    | pyromark.Options.ENABLE_MATH
)

# Split points, most preferred first.
_PARAGRAPH, _LINE, _CODE_LINE, _SPACE = range(4)


@dataclass(frozen=True)
class Chunk:
    """One Telegram message: text and Bot API MessageEntity dicts (UTF-16 offsets)."""

    text: str
    entities: list[dict[str, Any]]


def _chat_config() -> RenderConfig:
    """Symbols for chat: headings as plain bold (emoji prefixes read as noise), "•" bullets.

    Isolated so no other user of the library can change how our replies look.
    """
    config = RenderConfig.isolated()
    symbols = config.markdown_symbol
    symbols.heading_level_1 = symbols.heading_level_2 = symbols.heading_level_3 = ""
    symbols.heading_level_4 = symbols.heading_level_5 = symbols.heading_level_6 = ""
    symbols.unordered_list_item = "•"
    return config


_CONFIG = _chat_config()


def utf16_len(text: str) -> int:
    """Length as Telegram counts it: characters beyond the BMP take two code units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def render(markdown: str, *, limit: int = TELEGRAM_LIMIT, complete: bool = True) -> list[Chunk]:
    """Messages showing `markdown`, each at most `limit` UTF-16 units; [] if nothing to show.

    With `complete=False` the markdown is a prefix of a reply still being written; any prefix
    renders (an open fence reads as code up to the end). Should the converter ever fail, the
    raw markdown goes out plain: an unformatted reply beats none.
    """
    _check(limit)
    source = markdown if complete else _FENCE_TAIL.sub("\n", markdown)
    try:
        text, entities = _convert(source)
    except Exception:
        log.warning("markdown conversion failed; sending plain text", exc_info=True)
        return plain(markdown, limit=limit)
    return _split(text, entities, limit)


def folded(chunk: Chunk) -> Chunk:
    """`chunk` with the quote it starts with folded (an expandable blockquote): how the
    model's thinking sits above its answer, three lines shown until the reader opens it."""
    entities = [
        {**e, "type": "expandable_blockquote"} if e["offset"] == 0 and e["type"] == "blockquote"
        else e
        for e in chunk.entities
    ]  # fmt: skip
    return Chunk(chunk.text, entities)


def under_heard(
    heard: str, markdown: str, *, complete: bool = True, fold: bool = False
) -> list[Chunk]:
    """`render(markdown)` under what the person said in a voice note (one line, already
    short): a collapsed quote at the head of the first message, plain text in an entity, so
    nothing in it is read as formatting. `fold`: the quote the markdown starts with (the
    model's thinking) is `folded`."""
    head = f"🎤 {heard}" if heard else ""
    shift = utf16_len(head) + 2 if heard else 0
    chunks = render(markdown, limit=TELEGRAM_LIMIT - shift, complete=complete)
    if not chunks:
        return []
    first, rest = chunks[0], chunks[1:]
    if fold:
        first = folded(first)
    if not heard:
        return [first, *rest]
    entities = [{"type": "expandable_blockquote", "offset": 0, "length": utf16_len(head)}]
    entities += [{**entity, "offset": entity["offset"] + shift} for entity in first.entities]
    return [Chunk(f"{head}\n\n{first.text}", entities), *rest]


def plain(markdown: str, *, limit: int = TELEGRAM_LIMIT) -> list[Chunk]:
    """The text as is, cut like `render` cuts it: what is sent when formatting is refused."""
    _check(limit)
    return _split(markdown, [], limit)


def _check(limit: int) -> None:
    # A character beyond the BMP takes two units and cannot be cut, so one must fit.
    if limit < 2:
        raise ValueError(f"limit must be at least 2 UTF-16 units, got {limit}")


def _literal_html(markdown: str) -> str:
    """`markdown` with a backslash before every `<` the parser would take for HTML.

    A broken-up HTML block may reveal inline HTML inside it, so this parses again until no
    HTML is left; each round escapes at least one `<`, so it ends.
    """
    while "<" in markdown:
        source = markdown.encode()
        found = sorted({source.index(b"<", start) for start in _html(markdown)})
        if not found:
            break
        bounds = [0, *found, len(source)]
        markdown = b"\\".join(source[a:b] for a, b in pairwise(bounds)).decode()
    return markdown


def _html(markdown: str) -> list[int]:
    """Where raw HTML (a block or inline) starts, as UTF-8 byte offsets."""
    return [
        where["start"]
        for payload, where in pyromark.events_with_range(markdown, options=_OPTIONS)
        if payload == {"Start": "HtmlBlock"}
        or (isinstance(payload, dict) and "InlineHtml" in payload)
    ]


def _convert(markdown: str) -> tuple[str, list[dict[str, Any]]]:
    """Convert, keeping only entities Telegram accepts, ordered by position."""
    text, found = convert(_literal_html(markdown), config=_CONFIG)
    total = utf16_len(text)
    # H1/H2 come back bold and underlined; plain bold reads better in a chat.
    bold = {(e.offset, e.length) for e in found if e.type == "bold"}
    entities: list[dict[str, Any]] = []
    for entity in found:
        item: dict[str, Any] = entity.to_dict()
        start, end = max(item["offset"], 0), min(item["offset"] + item["length"], total)
        if end <= start or (item["type"] == "underline" and (start, end - start) in bold):
            continue
        if item["type"] == "text_link" and not _URL.fullmatch(item.get("url", "")):
            continue  # a relative or malformed link would make Telegram refuse the message
        entities.append({**item, "offset": start, "length": end - start})
    entities.sort(key=lambda e: (e["offset"], -e["length"]))
    return text, entities


@dataclass(frozen=True)
class _Layout:
    """The rendered text with the tables the splitter works from (indices are str indices)."""

    text: str
    entities: list[dict[str, Any]]
    units: list[int]  # units[i]: UTF-16 offset of text[i]; units[-1]: the whole length
    code: list[int]  # code[i]: index of the pre entity holding text[i], -1 outside code
    spans: list[tuple[int, int, dict[str, Any]]]  # entities as (start, end, entity)


def _layout(text: str, entities: list[dict[str, Any]]) -> _Layout:
    units = [0] * (len(text) + 1)
    for i, char in enumerate(text):
        units[i + 1] = units[i] + (2 if ord(char) > 0xFFFF else 1)
    spans = []
    for entity in entities:
        start = bisect_right(units, entity["offset"]) - 1
        end = bisect_right(units, entity["offset"] + entity["length"] - 1)
        spans.append((start, end, entity))
    code = [-1] * len(text)
    for number, (start, end, entity) in enumerate(spans):
        if entity["type"] == "pre":
            code[start:end] = [number] * (end - start)
    return _Layout(text, entities, units, code, spans)


def _split(text: str, entities: list[dict[str, Any]], limit: int) -> list[Chunk]:
    layout = _layout(text, entities)
    chunks = (_slice(layout, start, end) for start, end in _ranges(layout, limit))
    return [chunk for chunk in chunks if chunk.text.strip()]


def _ranges(layout: _Layout, limit: int) -> list[tuple[int, int]]:
    """Greedy: each message runs to the last split point of the best kind that still fits."""
    levels = _split_points(layout, limit)
    blocked = _blocked(layout, limit)
    units = layout.units
    start, end = _trim(layout, 0, len(layout.text))
    ranges: list[tuple[int, int]] = []
    while start < end:
        if units[end] - units[start] <= limit:
            ranges.append((start, end))
            break
        last = bisect_right(units, units[start] + limit) - 1
        cut, resume = _best_cut(levels, blocked, start, last)
        ranges.append(_trim(layout, start, cut))
        start, _ = _trim(layout, resume, end)
    return ranges


def _split_points(layout: _Layout, limit: int) -> list[list[tuple[int, int]]]:
    """Candidate (cut, resume) pairs for each kind of split point, in text order.

    Runs of whitespace are taken apart where a code block begins or ends, so the blank line
    before a block is a split point even when the code's first line is indented.
    """
    text, code = layout.text, layout.code
    reach = _reach(layout)
    levels: list[list[tuple[int, int]]] = [[], [], [], []]
    for match in _RUN.finditer(text):
        for start, end in _pieces(code, match.start(), match.end()):
            block = code[start]
            newline = text[start] == "\n"
            if block < 0 and newline:
                if end - start > 1 and reach[start] < end:
                    levels[_PARAGRAPH].append((start, end))
                levels[_LINE].append((start, end))
            elif block < 0 or _too_long(layout, block, limit):
                levels[_CODE_LINE if newline and block >= 0 else _SPACE].append((start, end))
    return levels


def _reach(layout: _Layout) -> list[int]:
    """reach[i]: the furthest end of a code span or quote starting at or before text[i].

    A run [a, b) lies inside one of them exactly when reach[a] >= b.
    """
    reach = [0] * (len(layout.text) + 1)
    for start, end, entity in layout.spans:
        if entity["type"] in _QUOTES:
            reach[start] = max(reach[start], end)
    for i in range(1, len(reach)):
        reach[i] = max(reach[i], reach[i - 1])
    return reach


def _pieces(code: list[int], start: int, end: int) -> list[tuple[int, int]]:
    """[start, end) cut wherever the code block under it changes."""
    pieces = []
    for i in range(start + 1, end + 1):
        if i == end or code[i] != code[i - 1]:
            pieces.append((start, i))
            start = i
    return pieces


def _too_long(layout: _Layout, block: int, limit: int) -> bool:
    return int(layout.spans[block][2]["length"]) > limit


def _blocked(layout: _Layout, limit: int) -> list[bool]:
    """blocked[i]: a cut before text[i] would split a code block that fits one message."""
    blocked = [False] * (len(layout.text) + 1)
    for number, (start, end, entity) in enumerate(layout.spans):
        if entity["type"] == "pre" and not _too_long(layout, number, limit):
            blocked[start + 1 : end] = [True] * max(end - start - 1, 0)
    return blocked


def _best_cut(
    levels: list[list[tuple[int, int]]], blocked: list[bool], start: int, last: int
) -> tuple[int, int]:
    """The latest split point in (start, last] of the most preferred kind that has one."""
    for points in levels:
        k = bisect_right(points, (last, len(blocked))) - 1
        if k >= 0 and points[k][0] > start:
            return points[k]
    cut = last
    while cut > start and blocked[cut]:
        cut -= 1
    cut = max(cut, start + 1)  # only a limit below one character's width gets here
    return cut, cut


def _trim(layout: _Layout, start: int, end: int) -> tuple[int, int]:
    """[start, end) without whitespace at either edge, except inside code where it matters."""
    text, code = layout.text, layout.code
    while start < end and text[start].isspace() and code[start] < 0:
        start += 1
    while end > start and text[end - 1].isspace() and code[end - 1] < 0:
        end -= 1
    return start, end


def _slice(layout: _Layout, start: int, end: int) -> Chunk:
    """text[start:end] with the entities clipped to it and re-based to its first unit."""
    low, high = layout.units[start], layout.units[end]
    entities = []
    for entity in layout.entities:
        first = max(entity["offset"], low)
        stop = min(entity["offset"] + entity["length"], high)
        if stop > first:
            entities.append({**entity, "offset": first - low, "length": stop - first})
    return Chunk(layout.text[start:end], entities)
