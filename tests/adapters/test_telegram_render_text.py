"""Rendering for Telegram never drops a character the model wrote, only markdown syntax.

What counts as syntax is what a CommonMark (GFM) parser reads as such: emphasis marks, code
fences and their info strings, link targets, list, quote and task markers. Raw HTML is not
syntax here: in a chat `<angle>` means those seven characters. The parser is asked directly
(pyromark, the one the converter uses), so the property does not depend on this test's idea
of markdown; it is asked about the text with every `<` escaped, which is how a parser without
raw HTML reads it, except the `<` that opens a link's `<destination>`, which is link syntax.
"""

from __future__ import annotations

import re

import pyromark
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.telegram.render import render

CHECKS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPTIONS = (
    pyromark.Options.ENABLE_TABLES
    | pyromark.Options.ENABLE_STRIKETHROUGH
    | pyromark.Options.ENABLE_TASKLISTS
    | pyromark.Options.ENABLE_MATH
)
CONTENT = ("Text", "Code")  # what the model wrote, as opposed to syntax
# A `<`, and what may stand before it in a link's `](  <destination>`.
ANGLE = re.compile(r"(\]\([ \n]*)?<")


def shown(markdown: str, *, final: bool = True) -> str:
    """The text Telegram shows, all messages together."""
    return "\n".join(chunk.text for chunk in render(markdown, limit=10**9, complete=final))


def content(markdown: str) -> str:
    """The characters a CommonMark parser does not read as syntax, in order, when `<` never
    opens HTML (`[](<)` is text, `[](<a>)` a link: the `<` there is not escaped). Inside
    code the escape itself is text, but a backslash is never compared."""
    parts = []
    escaped = ANGLE.sub(lambda m: m[0] if m[1] else "\\<", markdown)
    for payload in pyromark.events(escaped, options=OPTIONS):
        if isinstance(payload, dict):
            found: dict[str, object] = dict(payload)
            parts += [str(found[kind]) for kind in CONTENT if kind in found]
    return "".join(parts)


# --- text without markdown syntax comes out as it went in -------------------------------------

# No character here starts markdown syntax where it stands: `<` cannot open an autolink
# without `:` or `@`, `&` no entity reference without `;`, `[...]` no link without `(` or a
# definition; a `>` never starts a line (that would be a quote).
LETTERS = "abcXYZ"
TOKEN = st.text(LETTERS + "<>&/!?\"'[]", min_size=1, max_size=8)
LINE = st.tuples(
    st.sampled_from(["", " ", "  "]),
    st.text(LETTERS, min_size=1, max_size=5),
    st.lists(TOKEN, max_size=8),
    st.sampled_from(["", " ", "  "]),
).map(lambda p: p[0] + " ".join([p[1], *p[2]]) + p[3])
PLAIN = st.lists(st.tuples(LINE, st.sampled_from(["\n", "\n\n"])), min_size=1, max_size=6).map(
    lambda lines: "".join(line + end for line, end in lines)
)


@CHECKS
@given(PLAIN, st.booleans())
def test_text_without_syntax_is_shown_as_written(text: str, final: bool) -> None:
    """Equal up to whitespace: runs of spaces and line breaks may be normalised."""
    assert shown(text, final=final).split() == text.split()


# --- text with syntax keeps every character that is not syntax, in order ----------------------

ALPHABET = "ab <>&_*`[]()\n"  # no backslash, no `:` or `@` (autolinks), no `;` (entities)


@CHECKS
@given(st.text(ALPHABET, max_size=120))
def test_every_character_that_is_not_syntax_survives_in_order(markdown: str) -> None:
    """The non-blank characters of the parser's content, in order, are exactly those of the
    shown text (markers the renderer adds, such as bullets, are outside the alphabet)."""

    def visible(text: str) -> str:
        return "".join(char for char in text if char in ALPHABET and not char.isspace())

    assert visible(shown(markdown)) == visible(content(markdown))


@pytest.mark.parametrize(
    ("markdown", "text"),
    [
        (
            "1. first\n2. second item with <angle> & ampersand",
            "1. first\n2. second item with <angle> & ampersand",
        ),
        ("a <b>bold</b> c", "a <b>bold</b> c"),
        ("x <!-- note --> y", "x <!-- note --> y"),
        ("<div>\nq <i>\n</div>\n\nz", "<div>\nq <i>\n</div>\n\nz"),
        ("- <script>alert(1)</script>", "• <script>alert(1)</script>"),
        ("> <br> quoted", "<br> quoted"),
        ("`<a>` and <b>", "<a> and <b>"),
        ("```html\n<p>hi</p>\n```", "<p>hi</p>"),
        ("ü <é> 😀 <x/>", "ü <é> 😀 <x/>"),
    ],
)
def test_html_is_shown_as_text(markdown: str, text: str) -> None:
    assert shown(markdown) == text


def test_markdown_syntax_around_html_still_formats() -> None:
    (chunk,) = render("**bold <tag>** and <https://example.com>")
    assert chunk.text == "bold <tag> and https://example.com"
    assert [e["type"] for e in chunk.entities] == ["bold", "text_link"]


@pytest.mark.parametrize("markdown", ["[](<)", "x [](<) y", "[a](<b>)", "[a]( <b>) <c>"])
def test_a_link_destination_in_angle_brackets_keeps_its_text(markdown: str) -> None:
    """An unclosed `<destination>` is no link, so all of it shows; a closed one is a link."""

    def visible(text: str) -> str:
        return "".join(char for char in text if not char.isspace())

    assert visible(shown(markdown)) == visible(content(markdown))
