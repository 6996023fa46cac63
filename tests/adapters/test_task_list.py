"""What `/tasks` says on every platform: the list's size, the buttons' data read strictly,
and the line a task shows once it ended. (Presses: tests/integration/*/test_task_list.py.)"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from adapters.chat import item_list, task_list
from adapters.platforms.targets import target_of
from bot.tasks.model import Task
from bot.vocabulary.envelope import Sender
from tests.support.chat_tasks import task_as_stored

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def task(task_id: int, prompt: str = "call Ann", **more: Any) -> Task:
    ann = Sender(id="tg:1001", name="Ann")
    return task_as_stored(
        target_of("tg:1001"), ann, "every 2 hours", NOW, id=task_id, prompt=prompt, **more
    )


def test_no_tasks_is_no_list() -> None:
    assert task_list.listing([]) is None


def test_a_line_per_task_and_a_button_for_each_but_the_configured() -> None:
    shown = task_list.listing([task(3), task(5, name="digest")])
    assert shown is not None
    assert shown.lines[0] == task_list.HEADER
    assert shown.lines[1].startswith("#3 (every 2 hours, next Mon 2026-03-02 14:00 WET): ")
    assert shown.lines[2].endswith("call Ann (set in the configuration)")
    assert shown.buttons == [3]


def test_a_long_list_stops_in_time_and_says_how_many_more() -> None:
    many = task_list.listing([task(n) for n in range(1, 41)])
    assert many is not None and len(many.buttons) == task_list.SHOWN
    assert many.lines[-1] == "… and 10 more (ask me to list them all)."
    wordy = "every " + "2 hours and " * 17  # `when` is up to 200 characters
    long = task_list.listing([task(n).model_copy(update={"when": wordy}) for n in range(1, 41)])
    assert long is not None and len(long.text) < 4096 and len(long.buttons) < task_list.SHOWN
    assert long.lines[-1] == f"… and {40 - len(long.buttons)} more (ask me to list them all)."


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ("task:cancel:7", 7),
        ("task:cancel:123456789012345678", 123456789012345678),
        ("task:cancel:0", None),
        ("task:cancel:07", None),
        ("task:cancel:٣", None),  # a Unicode digit
        ("task:cancel:7 ", None),
        ("task:cancel:7\n", None),
        ("task:cancel:-7", None),
        ("task:cancel:", None),
        ("task:cancel:1234567890123456789", None),
        ("cf:abc:y", None),
        (None, None),
    ],
)
def test_button_data_is_read_strictly(data: str | None, expected: int | None) -> None:
    assert task_list.BUTTONS.parse(data) == expected
    if expected is not None:
        assert task_list.BUTTONS.payload(expected) == data


@pytest.mark.parametrize("value", ["", "x", "٣", "07", "1.5", "+1", " 1", None])
def test_a_slack_value_is_read_strictly(value: str | None) -> None:
    assert item_list.parse_id(value) is None


def test_a_task_belongs_to_its_chat_and_the_topics_inside_it_only() -> None:
    made = task(1).model_copy(update={"target": target_of("tg:-100:7")})
    assert task_list.in_chat(made, "tg:-100")
    assert task_list.in_chat(made, "tg:-100:7")
    assert not task_list.in_chat(made, "tg:-10")
    assert not task_list.in_chat(made, "tg:-1000")


def test_an_ended_task_replaces_its_own_line_only() -> None:
    cancelled = task(1, "<b>").model_copy(update={"status": "cancelled"})
    line = task_list.ended_line(cancelled, "<@U1>", lambda text: text.replace("<", "&lt;"))
    assert line == "#1 cancelled by <@U1>: &lt;b>"
    lines = ["Scheduled…", "#1 (every 2 hours, …): <b>", "#11 (every 2 hours, …): y"]
    assert item_list.replace_line(lines, 1, line) == [lines[0], line, lines[2]]
    done = task(2).model_copy(update={"status": "done"})
    assert task_list.ended_line(done) == "#2 done: call Ann"
