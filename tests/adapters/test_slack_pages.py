"""A growing reply cut into Slack messages: nothing lost, nothing taken back, code blocks whole."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.slack.pages import Pager, best_cut, fences

CHECKS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
LIMIT, HOLD = 300, 60

words = st.text(alphabet="abc xyz", min_size=1, max_size=40)
code = st.builds(
    lambda lang, lines: f"```{lang}\n" + "\n".join(lines) + "\n```",
    st.sampled_from(["", "python", "json"]),
    st.lists(st.text(alphabet="ab(){}= ", max_size=60), min_size=1, max_size=12),
)
paragraphs = st.lists(st.one_of(words, code), min_size=1, max_size=25).map("\n\n".join)


def stream(text: str, steps: list[int]) -> tuple[Pager, list[str]]:
    """Feed `text` in growing prefixes as a stream does; returns the pager and, per page,
    what was shown (checking at every step that shown text only ever grows)."""
    pager = Pager(limit=LIMIT, hold=HOLD)
    shown: list[str] = [""]
    position = 0
    cuts = sorted({min(len(text), s) for s in steps} | {len(text)})
    for index, end in enumerate(cuts):
        prefix = text[:end]
        complete = index == len(cuts) - 1
        pager.cut(prefix, position)
        while len(shown) < len(pager.pages):
            shown.append("")
        for page in range(len(pager.pages)):
            last = page == len(pager.pages) - 1
            upto = pager.visible(prefix, complete=complete) if last else None
            now = pager.text(prefix, page, upto)
            assert now.startswith(shown[page]), (shown[page], now)
            shown[page] = now
        position = max(position, min(len(prefix), pager.visible(prefix, complete=complete)))
    return pager, shown


@CHECKS
@given(paragraphs, st.lists(st.integers(min_value=0, max_value=4000), max_size=30))
def test_streamed_pages_keep_everything_and_only_grow(text: str, steps: list[int]) -> None:
    pager, shown = stream(text, steps)
    bodies = [text[page.start : page.end] for page in pager.pages]
    assert "".join(bodies) == text
    for index, page_text in enumerate(shown):
        assert page_text == pager.text(text, index)
        assert len(page_text) <= LIMIT
        assert all(span.closed for span in fences(page_text)), page_text  # renders on its own


def test_a_code_block_that_fits_is_moved_whole_to_the_next_page() -> None:
    block = "```python\n" + "\n".join(f"x = {i}" for i in range(20)) + "\n```"
    text = "intro " * 30 + "\n\n" + block + "\n\nafter"
    pager = Pager(limit=LIMIT, hold=HOLD)
    pager.cut(text, 0)
    assert len(pager.pages) == 2
    second = pager.text(text, 1)
    assert second.startswith("```python\n")
    assert not pager.pages[0].closes


def test_a_long_code_block_is_closed_and_reopened_with_its_language() -> None:
    block = "```json\n" + "\n".join(f'"k{i}": {i},' for i in range(80)) + "\n```"
    pager = Pager(limit=LIMIT, hold=HOLD)
    pager.cut(block, 0)
    assert len(pager.pages) > 2
    for index in range(len(pager.pages)):
        page = pager.text(block, index)
        assert page.startswith("```json\n")
        assert page.endswith("```")
        assert len(page) <= LIMIT


def test_cuts_prefer_blank_lines_then_lines_then_spaces() -> None:
    text = "aaaa bbbb\ncccc\n\ndddd eeee"
    assert best_cut(text, 0, len(text)) == text.index("\n\n") + 2
    assert best_cut(text, 0, text.index("\n\n")) == text.index("\n") + 1
    assert best_cut("aaaa bbbb cccc", 0, 12) == len("aaaa bbbb ")
    assert best_cut("a" * 50, 0, 30) == 30
