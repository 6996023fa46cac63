"""Markdown becomes Telegram messages: valid entities, cuts in sensible places, no text lost."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.telegram import render as render_module
from adapters.telegram.render import Chunk, plain, render, utf16_len

CHECKS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_valid(chunks: list[Chunk], limit: int = 4096) -> None:
    """What Telegram requires of every message: short enough, not blank, entities inside."""
    for chunk in chunks:
        size = utf16_len(chunk.text)
        assert chunk.text.strip()
        assert size <= limit
        for entity in chunk.entities:
            assert entity["offset"] >= 0
            assert entity["length"] > 0
            assert entity["offset"] + entity["length"] <= size


def whole(markdown: str) -> Chunk:
    """The rendered text before any cut."""
    chunks = render(markdown, limit=10**9)
    assert len(chunks) == 1
    return chunks[0]


def locate(full: str, chunks: list[Chunk]) -> list[int]:
    """Where each chunk starts in `full` (UTF-16); fails unless only whitespace lies between."""
    starts, cursor = [], 0
    for chunk in chunks:
        at = full.find(chunk.text, cursor)
        assert at >= 0, chunk.text
        assert not full[cursor:at].strip(), full[cursor:at]
        starts.append(utf16_len(full[:at]))
        cursor = at + len(chunk.text)
    assert not full[cursor:].strip()
    return starts


def clipped(entities: list[dict[str, object]], low: int, high: int) -> list[dict[str, object]]:
    out = []
    for entity in entities:
        offset, length = entity["offset"], entity["length"]
        assert isinstance(offset, int) and isinstance(length, int)
        first, stop = max(offset, low), min(offset + length, high)
        if stop > first:
            out.append({**entity, "offset": first - low, "length": stop - first})
    return out


def assert_split_well(markdown: str, limit: int) -> list[Chunk]:
    """Valid chunks that join back to the whole, entities clipped, no fitting code block cut."""
    chunks = render(markdown, limit=limit)
    assert_valid(chunks, limit)
    if not chunks:
        assert not render(markdown, limit=10**9)
        return chunks
    full = whole(markdown)
    spans = []
    for chunk, start in zip(chunks, locate(full.text, chunks), strict=True):
        end = start + utf16_len(chunk.text)
        assert chunk.entities == clipped(full.entities, start, end)
        spans.append((start, end))
    units = full.text.encode("utf-16-le")
    for entity in full.entities:
        low, high = entity["offset"], entity["offset"] + entity["length"]
        blank = not units[2 * low : 2 * high].decode("utf-16-le").strip()  # sent as nothing
        if entity["type"] == "pre" and entity["length"] <= limit and not blank:
            assert any(s <= low and high <= e for s, e in spans), entity
    return chunks


# --- random markdown -------------------------------------------------------------------------

WORDS = st.sampled_from(
    [
        "hello", "world", "the", "model", "**bold**", "_italic_", "*it*", "`x_y`", "😀",
        "👍🏽", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "日本語", "naïve", "a_b*c", "(1+2)=3!", "[link](https://example.com)",
        "**half", "x" * 120, "😀" * 40,
    ]
)  # fmt: skip
CODE_CHARS = "abcxyz =()[]{}_*#-.:\\😀é\t"
paragraphs = st.lists(WORDS, min_size=1, max_size=30).map(" ".join)
code_lines = st.lists(st.text(CODE_CHARS, max_size=70), min_size=1, max_size=40)
code_blocks = st.tuples(st.sampled_from(["", "python", "bash"]), code_lines).map(
    lambda block: f"```{block[0]}\n" + "\n".join(block[1]) + "\n```"
)
lists = st.lists(paragraphs, min_size=1, max_size=6).map(
    lambda items: "\n".join(f"- {item}" for item in items)
)
quotes = paragraphs.map(lambda text: f"> {text}\n> {text[::-1]}")
headings = st.lists(WORDS, min_size=1, max_size=4).map(lambda words: "## " + " ".join(words))
long_lines = st.text("abcdef😀𝔘", min_size=100, max_size=700)
blocks = st.one_of(paragraphs, code_blocks, lists, quotes, headings, long_lines)
documents = st.lists(blocks, min_size=1, max_size=12).map("\n\n".join)


@CHECKS
@given(documents, st.integers(min_value=8, max_value=700))
def test_chunks_fit_join_back_and_keep_fitting_code_whole(markdown: str, limit: int) -> None:
    assert_split_well(markdown, limit)


@CHECKS
@given(st.text(alphabet="ab *_`[]()>#-\n😀~|!\\.", max_size=300), st.booleans())
def test_any_text_renders_to_valid_entities(markdown: str, final: bool) -> None:
    assert_valid(render(markdown, limit=64, complete=final), limit=64)


# --- long replies ----------------------------------------------------------------------------


def test_long_reply_with_several_code_blocks() -> None:
    codes = [
        "\n".join(f"value_{n}_{i} = compute({i})  # step {i}" for i in range(15 + 10 * n))
        for n in range(6)
    ]
    parts = [
        f"Step {n}: " + "some explanation, **important** and _subtle_. " * 14
        + f"\n\n```python\n{code}\n```"
        for n, code in enumerate(codes)
    ]  # fmt: skip
    markdown = "\n\n".join(parts)
    assert len(markdown) > 8000
    chunks = assert_split_well(markdown, 4096)
    assert 3 <= len(chunks) <= 4
    for code in codes:
        holders = [c for c in chunks if code in c.text]
        assert len(holders) == 1
        start = utf16_len(holders[0].text[: holders[0].text.index(code)])
        block = {"type": "pre", "offset": start, "length": utf16_len(code), "language": "python"}
        assert block in holders[0].entities


def test_code_block_longer_than_a_message_is_split_between_lines() -> None:
    code = "\n".join(f"    print({i:05d})  # {'x' * 40}" for i in range(160))
    assert len(code) > 9000
    chunks = assert_split_well(f"```python\n{code}\n```", 4096)
    assert len(chunks) == 3
    assert "\n".join(chunk.text for chunk in chunks) == code  # indentation kept
    for chunk in chunks:
        size = utf16_len(chunk.text)
        assert chunk.entities == [
            {"type": "pre", "offset": 0, "length": size, "language": "python"}
        ]
    assert all(utf16_len(chunk.text) > 4096 - 60 for chunk in chunks[:-1])


def test_paragraph_boundaries_come_first_and_chunks_stay_full() -> None:
    paragraph = "word " * 199 + "end.\nsecond line of it"
    markdown = "\n\n".join([paragraph] * 10)
    chunks = assert_split_well(markdown, 4096)
    assert len(chunks) == 3  # four paragraphs a message, not one
    for chunk in chunks:
        assert chunk.text.startswith("word") and chunk.text.endswith("of it")


def test_lines_before_spaces_and_spaces_before_hard_cuts() -> None:
    lines = "\n".join(["short line"] * 30)
    assert [c.text.count("\n") for c in render(lines, limit=100)] == [8, 8, 8, 2]
    words = render("word " * 100, limit=52)
    assert all(c.text.startswith("word") and c.text.endswith("word") for c in words)
    assert [utf16_len(c.text) for c in words] == [49] * 10
    assert [utf16_len(c.text) for c in render("😀" * 3000)] == [4096, 1904]
    cut = render("a😀" * 10, limit=5)
    assert_valid(cut, limit=5)
    assert "".join(c.text for c in cut) == "a😀" * 10  # no pair broken, nothing lost
    assert [c.text for c in render("😀😀😀", limit=3)] == ["😀", "😀", "😀"]


def test_blank_lines_inside_quotes_are_not_paragraph_boundaries() -> None:
    markdown = "Intro.\n\n> " + "q " * 30 + "\n>\n> " + "r " * 30
    chunks = assert_split_well(markdown, 100)
    assert [c.text[0] for c in chunks] == ["I", "q", "r"]
    assert chunks[0].text == "Intro."


# --- characters ------------------------------------------------------------------------------


def test_utf16_len_counts_surrogate_pairs_twice() -> None:
    assert utf16_len("") == 0
    assert utf16_len("abc") == 3
    assert utf16_len("😀") == 2
    assert utf16_len("a😀é𝔘") == 6


def test_entities_are_measured_in_utf16_units() -> None:
    (chunk,) = render("😀 **bold 𝔘** and `x`")
    assert chunk.text == "😀 bold 𝔘 and x"
    assert {"type": "bold", "offset": 3, "length": 7} in chunk.entities
    assert {"type": "code", "offset": 15, "length": 1} in chunk.entities


def test_special_characters_come_through_as_plain_text() -> None:
    prose = r"1 + 1 = 2! (a) [b] {c} #d ~e |f| g.h a-b C:\dir x>y"
    (chunk,) = render(prose)
    assert chunk.text == prose
    assert chunk.entities == []
    (code,) = render("`_*[]()~>#+-=|{}.!\\`")
    assert code.text == "_*[]()~>#+-=|{}.!\\"
    assert code.entities == [{"type": "code", "offset": 0, "length": 18}]
    (escaped,) = render(r"\_\*\\")
    assert escaped.text == "_*\\"


def test_headings_are_bold_without_emoji_and_bullets_are_dots() -> None:
    (chunk,) = render("# Title\n\n## Sub\n\n- one\n- two")
    assert chunk.text == "Title\n\nSub\n\n• one\n• two"
    assert chunk.entities == [
        {"type": "bold", "offset": 0, "length": 5},
        {"type": "bold", "offset": 7, "length": 3},
    ]


def test_links_telegram_would_refuse_are_left_as_text() -> None:
    (chunk,) = render("[a](/relative) [b](https://example.com/x?y=1) [c](example.org)")
    assert chunk.text == "a b c"
    assert [e.get("url") for e in chunk.entities] == ["https://example.com/x?y=1", "example.org"]


# --- streaming -------------------------------------------------------------------------------

REPLIES = [
    "Sure! Here's how to **read a file** in Python:\n\n```python\nwith open('data.txt') as f:\n"
    "    for line in f:\n        print(line.rstrip())  # strip the _newline_\n```\n\n"
    "Notes:\n\n1. `open()` defaults to *text* mode.\n2. See [the docs](https://docs.python.org/3/)"
    " for more 📚.\n\n> Tip: use `pathlib` for paths.",
    "## Summary 🎉\n\n| Name | Value |\n|------|-------|\n| a_b | 1*2 |\n\nRun:\n\n```bash\n"
    "pip install -U 'pkg[extra]'\n```\n\n- **Done**: ~~old~~ new\n- _Pending_: ||secret||\n"
    "  - nested [link](https://example.com/a_(b))\n\nCost ≈ $10.49 (~$11.20). 𝔘𝔫𝔦 😀👍🏽",
    "Let me explain `x * y` vs `x ** y`:\n\n* first: __bold__ and *it\n* second\n\n"
    "~~~js\nconst a = `tmpl ${x}`;\n~~~\n\nDone\\! #hashtag [ref][1]\n\n[1]: https://ex.com",
]


def test_every_prefix_of_a_reply_renders_valid_chunks() -> None:
    for reply in REPLIES:
        for end in range(len(reply) + 1):
            assert_valid(render(reply[:end], complete=False))


@CHECKS
@given(st.sampled_from(REPLIES), st.data(), st.integers(min_value=2, max_value=120))
def test_any_prefix_splits_into_valid_chunks(reply: str, data: st.DataObject, limit: int) -> None:
    prefix = reply[: data.draw(st.integers(min_value=0, max_value=len(reply)))]
    assert_valid(render(prefix, limit=limit, complete=False), limit)


@pytest.mark.parametrize(
    ("prefix", "text", "entities"),
    [
        ("```python\nprint('hi')", "print('hi')", [("pre", "python")]),
        ("```py\nx = 1\n``", "x = 1", [("pre", "py")]),
        ("Intro\n\n```", "Intro", []),
        ("**bold", "**bold", []),
        ("Some `code", "Some `code", []),
        ("[docs](https://exa", "[docs](https://exa", []),
        ("> quote\n> mo", "quote\nmo", [("blockquote", None)]),
        ("- one\n- tw", "• one\n• tw", []),
    ],
)
def test_partial_markdown(prefix: str, text: str, entities: list[tuple[str, str | None]]) -> None:
    (chunk,) = render(prefix, complete=False)
    assert chunk.text == text
    assert [(e["type"], e.get("language")) for e in chunk.entities] == entities


def test_nothing_to_show_gives_no_chunks() -> None:
    assert render("") == []
    assert render("  \n\n ", complete=False) == []
    assert plain(" \n") == []


# --- plain fallback --------------------------------------------------------------------------


def test_plain_keeps_the_markdown_as_text_and_splits_it_the_same_way() -> None:
    assert plain("**a** _b_") == [Chunk("**a** _b_", [])]
    chunks = plain("word " * 2000)
    assert_valid(chunks)
    assert [c.entities for c in chunks] == [[], [], []]


def test_conversion_failure_falls_back_to_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(markdown: str, **_: object) -> None:
        raise RuntimeError("parser bug")

    monkeypatch.setattr(render_module, "convert", broken)
    assert render("**a** " * 1000, complete=False) == plain("**a** " * 1000)


def test_limit_must_fit_one_character() -> None:
    with pytest.raises(ValueError, match="limit"):
        render("hi", limit=1)
