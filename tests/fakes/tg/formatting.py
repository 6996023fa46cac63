"""Text checks as strict as Telegram's: UTF-16 lengths, entities, MarkdownV2, HTML."""

from __future__ import annotations

import html.parser
import json
from typing import Any

from tests.fakes.tg.model import ApiError, bad

MAX_TEXT = 4096
RESERVED = set("_*[]()~`>#+-=|{}.!")
ENTITY_TYPES = {
    "mention",
    "hashtag",
    "cashtag",
    "bot_command",
    "url",
    "email",
    "phone_number",
    "bold",
    "italic",
    "underline",
    "strikethrough",
    "spoiler",
    "blockquote",
    "expandable_blockquote",
    "code",
    "pre",
    "text_link",
    "text_mention",
    "custom_emoji",
    "date_time",
}
MARKERS = {"*": "bold", "_": "italic", "__": "underline", "~": "strikethrough", "||": "spoiler"}
HTML_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "a": "text_link",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "tg-emoji": "custom_emoji",
}


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def parse_error(reason: str) -> ApiError:
    return bad(f"can't parse entities: {reason}")


def formatted(params: dict[str, Any], field: str = "text") -> tuple[str, list[dict[str, Any]]]:
    """The text and entities of a request: explicit entities win over parse_mode."""
    text = str(params.get(field, ""))
    raw = params.get("entities") if field == "text" else params.get("caption_entities")
    if raw is not None:
        entities = json.loads(raw) if isinstance(raw, str) else raw
        check_entities(text, entities)
        return text, entities
    mode = params.get("parse_mode")
    if mode == "MarkdownV2":
        return markdown_v2(text)
    if mode == "HTML":
        return html_text(text)
    return text, []


def check_text(text: str, *, allow_empty: bool = False) -> None:
    if not text.strip() and not allow_empty:
        raise bad("message text is empty")
    if utf16(text) > MAX_TEXT:
        raise bad("message is too long")


def check_entities(text: str, entities: Any) -> None:
    if not isinstance(entities, list):
        raise parse_error("entities must be an array")
    size = utf16(text)
    for index, entity in enumerate(entities):
        if not isinstance(entity, dict) or entity.get("type") not in ENTITY_TYPES:
            raise parse_error(f"unsupported entity type at index {index}")
        offset, length = entity.get("offset"), entity.get("length")
        if not isinstance(offset, int) or not isinstance(length, int) or length <= 0:
            raise parse_error(f"entity {index} has a bad offset or length")
        if offset < 0 or offset + length > size:
            raise parse_error(f"entity {index} ends beyond the end of the text")
        if entity["type"] == "text_link" and not entity.get("url"):
            raise parse_error(f"text_link entity {index} has no url")


def markdown_v2(source: str) -> tuple[str, list[dict[str, Any]]]:
    """A MarkdownV2 parser for the common entities; unescaped reserved characters are errors."""
    out: list[str] = []
    entities: list[dict[str, Any]] = []
    open_at: dict[str, tuple[int, int]] = {}
    i = 0
    while i < len(source):
        char = source[i]
        if char == "\\":
            if i + 1 >= len(source):
                raise parse_error("unexpected end of text after '\\'")
            out.append(source[i + 1])
            i += 2
            continue
        if source.startswith("```", i):
            i = _pre(source, i, out, entities)
            continue
        if char == "`":
            end = source.find("`", i + 1)
            if end < 0:
                raise parse_error(f"Can't find end of the entity starting at byte offset {i}")
            start = utf16("".join(out))
            out.append(source[i + 1 : end].replace("\\`", "`"))
            entities.append({"type": "code", "offset": start, "length": utf16(source[i + 1 : end])})
            i = end + 1
            continue
        marker = source[i : i + 2] if source[i : i + 2] in ("__", "||") else char
        if marker in MARKERS:
            position = utf16("".join(out))
            if marker in open_at:
                begin, _ = open_at.pop(marker)
                if position > begin:
                    entities.append(
                        {"type": MARKERS[marker], "offset": begin, "length": position - begin}
                    )
            else:
                open_at[marker] = (position, i)
            i += len(marker)
            continue
        if char in RESERVED:
            raise parse_error(
                f"Character '{char}' is reserved and must be escaped with the preceding '\\'"
            )
        out.append(char)
        i += 1
    if open_at:
        _, byte = min(open_at.values(), key=lambda pair: pair[1])
        raise parse_error(f"Can't find end of the entity starting at byte offset {byte}")
    return "".join(out), entities


def _pre(source: str, i: int, out: list[str], entities: list[dict[str, Any]]) -> int:
    end = source.find("```", i + 3)
    if end < 0:
        raise parse_error(f"Can't find end of the entity starting at byte offset {i}")
    body = source[i + 3 : end]
    language, newline, code = body.partition("\n")
    if not newline:
        language, code = "", body
    start = utf16("".join(out))
    out.append(code)
    entity: dict[str, Any] = {"type": "pre", "offset": start, "length": utf16(code)}
    if language.strip():
        entity["language"] = language.strip()
    if code:
        entities.append(entity)
    return end + 3


class _Html(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.out: list[str] = []
        self.stack: list[tuple[str, int, dict[str, Any]]] = []
        self.entities: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in HTML_TAGS:
            raise parse_error(f'Unsupported start tag "{tag}"')
        extra: dict[str, Any] = {}
        if tag == "a":
            extra["url"] = dict(attrs).get("href") or ""
            if not extra["url"]:
                raise parse_error('Can\'t find end of a tag "a": no href')
        self.stack.append((tag, utf16("".join(self.out)), extra))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1][0] != tag:
            raise parse_error(f'Unmatched end tag "{tag}"')
        name, begin, extra = self.stack.pop()
        length = utf16("".join(self.out)) - begin
        if length > 0:
            self.entities.append({"type": HTML_TAGS[name], "offset": begin, "length": length})
            self.entities[-1].update(extra)

    def handle_data(self, data: str) -> None:
        self.out.append(data)

    def handle_entityref(self, name: str) -> None:
        known = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
        if name not in known:
            raise parse_error(f'Unsupported HTML entity "&{name};"')
        self.out.append(known[name])

    def handle_charref(self, name: str) -> None:
        self.out.append(chr(int(name[1:], 16) if name.lower().startswith("x") else int(name)))


def html_text(source: str) -> tuple[str, list[dict[str, Any]]]:
    parser = _Html()
    parser.feed(source)
    parser.close()
    if parser.stack:
        tag = parser.stack[-1][0]
        raise parse_error(f'Can\'t find end tag corresponding to start tag "{tag}"')
    return "".join(parser.out), parser.entities


def check_markup(raw: Any) -> dict[str, Any] | None:
    """An inline keyboard, with Telegram's rule of 1-64 bytes of callback data per button."""
    if raw is None:
        return None
    markup = json.loads(raw) if isinstance(raw, str) else raw
    rows = markup.get("inline_keyboard")
    if not isinstance(rows, list):
        return dict(markup)
    for row in rows:
        for button in row:
            if not str(button.get("text", "")).strip():
                raise bad("inline keyboard button text is empty")
            data = button.get("callback_data")
            if data is not None and not 1 <= len(str(data).encode()) <= 64:
                raise bad("BUTTON_DATA_INVALID")
    return dict(markup)
