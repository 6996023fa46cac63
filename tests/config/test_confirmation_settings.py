"""How long approvals wait and when their person is reminded: the global settings, and a
policy rule's own wait, read strictly."""

from __future__ import annotations

import pytest

from bot.config.settings import ConfigError, load_settings
from bot.config.values import PolicyRule
from bot.tools.policy import Policy


def test_the_reminder_comes_two_minutes_before_the_expiry_unless_turned_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings().confirmation_remind == 120.0
    monkeypatch.setenv("PARLEY_CONFIRMATION_REMIND", "Off")
    assert load_settings().confirmation_remind is None
    monkeypatch.setenv("PARLEY_CONFIRMATION_REMIND", "30")
    assert load_settings().confirmation_remind == 30.0


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"PARLEY_CONFIRMATION_REMIND": "soon"},
            "PARLEY_CONFIRMATION_REMIND: Input should be a valid number",
        ),
        (
            {"PARLEY_POLICY": '[{"action": "allow", "tool": "x", "timeout": 60}]'},
            "PARLEY_POLICY: timeout is only for a rule whose action is ask",
        ),
        (
            {"PARLEY_POLICY": '[{"action": "ask", "tool": "x", "timeout": 1}]'},
            "PARLEY_POLICY: Input should be greater than or equal to 5",
        ),
        (
            {"PARLEY_POLICY": '[{"action": "ask", "tool": "x", "timeout": "soon"}]'},
            "PARLEY_POLICY: Input should be a valid number",
        ),
    ],
)
def test_bad_waits_are_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert expected in str(caught.value) and "\n" not in str(caught.value)


def test_a_rules_timeout_is_read() -> None:
    policy = Policy([PolicyRule(action="ask", tool="launch", timeout=30)])
    assert policy.timeout("launch", {}) == 30
    assert policy.timeout("other", {}) is None
