"""Settings an operator most likely got wrong: what Parley cannot run with stops the process
with one line naming the variable; what it can run with but was hardly meant (a typo in a
variable's name, a fetch allowlist that opens the machine itself) is one warning line."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Union, get_args, get_origin

import pytest

from bot.config.settings import ConfigError, Settings, env_name, load_settings
from bot.config.warnings import broad_networks, unclaimed_variables, unknown_variables
from tests.config.test_settings import SECRET, TASK, run_parley


def _is_float(annotation: object) -> bool:
    if get_origin(annotation) in (Union, types.UnionType):
        return float in get_args(annotation)
    return annotation is float


FLOATS = sorted(name for name, info in Settings.model_fields.items() if _is_float(info.annotation))


def test_the_float_settings_are_found() -> None:
    assert {"turn_timeout", "retention_days", "task_grace", "slack_rate_share"} <= set(FLOATS)


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "-1", "1e308"])
@pytest.mark.parametrize("name", FLOATS)
def test_every_float_setting_refuses_the_impossible(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    variable = env_name(name)
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError) as caught:
        load_settings(_env_file=None)
    message = str(caught.value)
    assert message.startswith(f"{variable}: Input should be "), message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql+asyncpg://u:{s}@h:99999/d", "DATABASE_URL: the port must be a number from 1"),
        ("postgresql://u:{s}@h:0/d", "DATABASE_URL: the port must be a number from 1"),
        ("postgresql+nosuch://u:{s}@h/d", "DATABASE_URL: no driver 'nosuch' for postgresql"),
        ("sqlite+nosuch:///x.db", "DATABASE_URL: no driver 'nosuch' for sqlite"),
        ("nosuch://u:{s}@h/d", "DATABASE_URL: 'nosuch' is not supported"),
        ("{s}", "DATABASE_URL: not a database URL"),
        ("postgresql://u:{s}@h:port/d", "DATABASE_URL: not a database URL"),
    ],
)
def test_a_bad_database_url_is_one_line_without_its_password(
    monkeypatch: pytest.MonkeyPatch, url: str, expected: str
) -> None:
    monkeypatch.setenv("DATABASE_URL", url.format(s=SECRET))
    with pytest.raises(ConfigError) as caught:
        load_settings(_env_file=None)
    assert str(caught.value).startswith(expected)
    assert SECRET not in str(caught.value)


def test_a_known_driver_is_taken_and_made_the_async_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.config.database_url import database_url

    assert str(database_url("postgresql+psycopg2://u@h:5432/d")) == (
        "postgresql+asyncpg://u@h:5432/d"
    )
    assert str(database_url("sqlite+pysqlite:///x.db")) == "sqlite+aiosqlite:///x.db"


@pytest.mark.parametrize(
    ("when", "minimum", "expected"),
    [
        ("every 1 minute", None, "That runs every 1 minute; tasks may run at most every 5 minutes"),
        ("* * * * *", None, "That runs every 1 minute; tasks may run at most every 5 minutes"),
        ("every 2 hours", "10800", "That runs every 2 hours; tasks may run at most every 3 hours"),
    ],
)
def test_a_configured_task_more_frequent_than_the_minimum_is_refused(
    monkeypatch: pytest.MonkeyPatch, when: str, minimum: str | None, expected: str
) -> None:
    monkeypatch.setenv("PARLEY_TASKS", TASK % when)
    if minimum is not None:
        monkeypatch.setenv("PARLEY_TASK_MIN_INTERVAL", minimum)
    with pytest.raises(ConfigError) as caught:
        load_settings(_env_file=None)
    assert str(caught.value) == f"PARLEY_TASKS: task 'digest': {expected}."


def test_a_configured_task_at_the_minimum_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARLEY_TASKS", TASK % "every 5 minutes")
    assert [task.name for task in load_settings(_env_file=None).tasks] == ["digest"]


def test_an_unknown_parley_variable_is_named_with_the_closest_setting(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("PARLEY_TURN_TIMEOUTT=5\nPARLEY_MODEL=claude-x\nOTHER_TOOL=1\n")
    environ = {
        "PARLEY_MAX_ITERATONS": "5",
        "parley_max_tokens": "10",  # read: names are not case-sensitive
        "PARLEY_XYZZY": "1",
        "REDIS_URL": "redis://h/0",
        "HOME": "/root",
    }
    assert unknown_variables(environ, env_file) == [
        "PARLEY_MAX_ITERATONS is not a setting (did you mean PARLEY_MAX_ITERATIONS?); "
        "it is ignored",
        "PARLEY_XYZZY is not a setting; it is ignored",
        "PARLEY_TURN_TIMEOUTT (in .env) is not a setting (did you mean PARLEY_TURN_TIMEOUT?); "
        "it is ignored",
    ]
    assert unknown_variables({}, tmp_path / "absent.env") == []


def test_a_tool_s_own_setting_is_left_to_where_the_tools_are_known(tmp_path: Path) -> None:
    """`PARLEY_TOOL_<NAME>_<KEY>` may be any tool's, so the settings' check says nothing of
    it; one too short to be a tool's is still a mistyped setting."""
    environ = {"PARLEY_TOOL_SAVE_NOTE_FILE": "/srv/notes.txt", "PARLEY_TOOL_TIMOUT": "5"}
    assert unknown_variables(environ, tmp_path / "absent.env") == [
        "PARLEY_TOOL_TIMOUT is not a setting (did you mean PARLEY_TOOL_TIMEOUT?); it is ignored"
    ]
    names = [*environ, "PARLEY_TOOL_OUTPUT_LIMT", "PARLEY_TOOL_WEATHER_KEY", "PARLEY_TOOL_THREADS"]
    claimed = ("PARLEY_TOOL_SAVE_NOTE_", "PARLEY_TOOL_WEATHER_")
    assert unclaimed_variables(names, lambda name: name.startswith(claimed)) == [
        "PARLEY_TOOL_OUTPUT_LIMT is not a setting nor a tool's (did you mean "
        "PARLEY_TOOL_OUTPUT_LIMIT?); it is ignored"
    ]


def test_fetch_entries_that_open_the_machine_or_every_private_range_are_named() -> None:
    entries = [
        "0.0.0.0/0",
        "::/0",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "fd00::/8",
        "::ffff:0:0/96",
        "64:ff9b::/96",
        "8.0.0.0/6",
        "localhost",
        "*.localhost",
        "10.0.0.0/8",
        "10.1.0.0/16",
        "192.168.1.0/24",
        "fc00:1::/32",
        "8.8.8.0/24",
        "wiki.corp.example",
        "*.corp.example",
    ]
    flagged = [line.split(" ")[1] for line in broad_networks(entries)]
    assert flagged == entries[:10]
    assert all("\n" not in line for line in broad_networks(entries))


@pytest.mark.e2e  # runs `python -m worker`
def test_the_command_warns_once_a_line_and_goes_on(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("PARLEY_TURN_TIMEOUTT=5\n")
    env = {
        "ANTHROPIC_API_KEY": "k",
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/parley.db",
        "PARLEY_MAX_ITERATONS": SECRET,
        "PARLEY_FETCH_ALLOW_HOSTS": "0.0.0.0/0, 10.1.0.0/16",
    }
    proc = run_parley("migrate", env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 3, proc.stderr
    assert "WARNING" in lines[0] and lines[0].endswith(
        "PARLEY_MAX_ITERATONS is not a setting (did you mean PARLEY_MAX_ITERATIONS?); it is ignored"
    )
    assert lines[1].endswith(
        "PARLEY_TURN_TIMEOUTT (in .env) is not a setting (did you mean PARLEY_TURN_TIMEOUT?); "
        "it is ignored"
    )
    assert "PARLEY_FETCH_ALLOW_HOSTS: 0.0.0.0/0 lets web_fetch reach" in lines[2]
    assert "Traceback" not in proc.stderr and SECRET not in proc.stdout + proc.stderr
    assert "schema at" in proc.stdout
