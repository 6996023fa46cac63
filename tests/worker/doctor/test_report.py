"""The checklist: a line per check, the fix under each failure or warning, a summary, the
exit status's count, and no secret, however a finding came to quote one."""

from __future__ import annotations

import json

import pytest

from worker.doctor.report import (
    Finding,
    Scrub,
    failed,
    failures,
    ok,
    render,
    render_json,
    skipped,
    warning,
)

SECRET = "hunter2-very-secret"


def findings() -> list[Finding]:
    return [
        ok("redis", "Redis 7.4.2 at redis://:***@redis:6379/0"),
        failed("redis persistence", "nothing is persisted", "set appendonly yes"),
        warning("configuration", "PARLEY_MAX_ITERATONS is not a setting", "change it"),
        skipped("slack", "SLACK_BOT_TOKEN is not set"),
        failed("telegram", f"Telegram said {SECRET}", f"check the token {SECRET}"),
    ]


def test_each_finding_is_a_line_and_each_fix_the_line_under_it() -> None:
    lines = render(findings(), Scrub()).splitlines()
    assert lines[0].split() == ["ok", "redis", "Redis", "7.4.2", "at", "redis://:***@redis:6379/0"]
    assert lines[1].startswith("FAILED  redis persistence  nothing is persisted")
    assert lines[2].strip() == "fix: set appendonly yes"
    assert lines[3].startswith("WARN    configuration")
    assert lines[4].strip() == "fix: change it"
    assert lines[5].split()[:2] == ["skip", "slack"]
    assert lines[-1] == "parley doctor: 2 failed, 1 warnings, 1 ok, 1 skipped"
    assert failures(findings()) == 2


def test_no_secret_is_printed_in_the_text_or_the_json() -> None:
    scrub = Scrub([SECRET, "short"])
    text = render(findings(), scrub)
    as_json = render_json(findings(), scrub)
    assert SECRET not in text and SECRET not in as_json
    assert "Telegram said ***" in text and "check the token ***" in text
    checks = json.loads(as_json)
    assert checks["ok"] is False
    assert checks["checks"][4] == {
        "check": "telegram",
        "status": "failed",
        "found": "Telegram said ***",
        "fix": "check the token ***",
    }


def test_values_of_variables_named_like_secrets_are_hidden_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOME_TOOL_API_KEY", "tool-key-123456")
    monkeypatch.setenv("PARLEY_MODEL", "claude-sonnet-4-5")
    scrub = Scrub()
    assert scrub("tool-key-123456 with claude-sonnet-4-5") == "*** with claude-sonnet-4-5"
