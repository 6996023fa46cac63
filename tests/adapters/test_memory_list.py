"""What `/memory` says on every platform: the list's bounds, the buttons' data read strictly,
and the lines of a list once a memory is forgotten. (Presses:
tests/integration/*/test_memory_list.py.)"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from adapters.chat import item_list, memory_list
from bot.store.memory import MAX_TEXT, Memory

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def memory(memory_id: int, text: str = "Ann takes her coffee black") -> Memory:
    return Memory(memory_id, "tg:1001", text, NOW)


def test_numbered_as_the_prompt_shows_them_newest_first() -> None:
    shown = memory_list.listed([memory(12), memory(3, "Eve is Ann's sister")], 2, private=True)
    assert shown.lines == [
        memory_list.PRIVATE_HEADER,
        "#12 Ann takes her coffee black",
        "#3 Eve is Ann's sister",
    ]
    assert shown.buttons == [12, 3]
    group = memory_list.listed([memory(4)], 1, private=False)
    assert group.lines[0] == memory_list.CHAT_HEADER and len(group.lines) == 2


def test_a_long_list_stops_at_its_budget_and_says_how_many_more() -> None:
    many = [memory(100 - n, "x" * MAX_TEXT) for n in range(memory_list.SHOWN)]
    shown = memory_list.listed(many, 75, private=True)
    assert len(shown.text) <= memory_list.TEXT_LIMIT + 60
    assert 1 < len(shown.buttons) < memory_list.SHOWN
    more = 75 - len(shown.buttons)
    assert shown.lines[-1] == f"… and {more} more (ask me to recall them)."
    short = [memory(100 - n) for n in range(memory_list.SHOWN)]
    counted = memory_list.listed(short, 31, private=True)
    assert len(counted.buttons) == memory_list.SHOWN
    assert counted.lines[-1] == "… and 1 more (ask me to recall them)."
    assert len(counted.lines) == memory_list.SHOWN + 2  # header, memories, "more": < 50 blocks


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("mem:forget:12", 12),
        ("mem:forget:999999999999999999", 999_999_999_999_999_999),
        ("mem:forget:", None),
        ("mem:forget:012", None),
        ("mem:forget:٣", None),
        ("mem:forget:1 ", None),
        ("task:cancel:12", None),
        (None, None),
    ],
)
def test_button_data_is_read_strictly(data: str | None, expected: int | None) -> None:
    assert memory_list.BUTTONS.parse(data) == expected
    if expected is not None:
        assert len(memory_list.BUTTONS.payload(expected).encode()) <= 64


def test_a_forgotten_line_replaces_only_its_own() -> None:
    lines = [memory_list.PRIVATE_HEADER, "#12 tea", "#1 coffee", "#123 cake"]
    assert item_list.shows(lines, 12) and not item_list.shows(lines, 2)
    replaced = item_list.replace_line(lines, 12, memory_list.forgotten_line(12))
    assert replaced == [memory_list.PRIVATE_HEADER, "#12 forgotten", "#1 coffee", "#123 cake"]
