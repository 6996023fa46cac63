"""A Stop button's value is read strictly: only the session and the reply it names, both
non-empty strings; anything else (a forged or mangled value) stops nothing."""

from __future__ import annotations

import pytest

from adapters.slack.stop_button import Pressed, blocks


def test_a_buttons_value_names_its_session_and_reply() -> None:
    pressed = Pressed("slack:T1:C1:1.5", "slack:T1:C1:1.5")
    (actions,) = blocks(pressed)
    (button,) = actions["elements"]
    assert Pressed.parse(button["value"]) == pressed
    assert len(button["value"]) <= 2000  # Slack's most for a button's value


@pytest.mark.parametrize(
    "value",
    [
        "",
        "slack:T1:C1",
        "[]",
        '{"session": "slack:T1:C1"}',
        '{"session": "slack:T1:C1", "reply": ""}',
        '{"session": 1, "reply": "r"}',
        '{"session": "s", "reply": "r", "more": 1}',
    ],
)
def test_anything_else_is_no_buttons_value(value: str) -> None:
    assert Pressed.parse(value) is None
