"""Log lines: the secrets the settings hold never appear, JSON lines carry the turn they were
logged in, and `parley` processes log as PARLEY_LOG_FORMAT says."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from pydantic import SecretStr

from bot.config.settings import Settings
from bot.telemetry import logs

TOKEN = "123456:AAH-very-secret-bot-token"
SETTINGS = Settings(
    _env_file=None,
    telegram_bot_token=SecretStr(TOKEN),
    anthropic_api_key=SecretStr("sk-ant-key-of-the-bench"),
    redis_url="redis://:hunter2-redis@localhost:6379/0",
    database_url="postgresql://parley:pg-s3cret-pw@db/parley",
    api_token=SecretStr("abc"),  # too short to take out of every line
)


def handler(formatter: logging.Formatter) -> tuple[logging.Handler, io.StringIO]:
    stream = io.StringIO()
    made = logging.StreamHandler(stream)
    made.addFilter(logs.Scrub(logs.secrets_of(SETTINGS)))
    made.setFormatter(formatter)
    return made, stream


def test_every_secret_of_the_settings_is_known() -> None:
    assert logs.secrets_of(SETTINGS, environ={}) == [
        TOKEN,
        "sk-ant-key-of-the-bench",
        "hunter2-redis",
        "pg-s3cret-pw",
    ]  # fmt: skip  (longest first)


def test_a_tools_setting_named_as_a_secret_is_one() -> None:
    environ = {
        "PARLEY_TOOL_WEATHER_API_KEY": "weather-key-123456",
        "parley_tool_crm_token": "crm-token-123456",
        "PARLEY_TOOL_DB_PASSWORD": "db-password-123456",
        "PARLEY_TOOL_MAIL_CLIENT_SECRET": "mail-secret-123456",
        "PARLEY_TOOL_SAVE_NOTE_FILE": "/srv/notes/today.txt",  # a path: shown
        "PARLEY_TOOL_KEYBOARD_LAYOUT": "dvorak-programmer",  # KEY only inside a word
        "ANTHROPIC_API_KEY_X": "not-a-tool-setting",
    }
    found = logs.secrets_of(SETTINGS, environ)
    assert set(found) - set(logs.secrets_of(SETTINGS, {})) == {
        "weather-key-123456", "crm-token-123456", "db-password-123456", "mail-secret-123456"
    }  # fmt: skip


def test_secrets_are_taken_out_of_messages_and_tracebacks() -> None:
    made, stream = handler(logging.Formatter(logs.TEXT))
    log = logging.getLogger("test.logs.text")
    log.addHandler(made)
    try:
        log.warning("GET https://api.telegram.org/bot%s/getMe failed", TOKEN)
        try:
            raise ConnectionError("could not connect to postgresql://parley:pg-s3cret-pw@db")
        except ConnectionError:
            log.exception("database away")
    finally:
        log.removeHandler(made)
    written = stream.getvalue()
    assert "bot[redacted]/getMe failed" in written
    assert "postgresql://parley:[redacted]@db" in written
    assert TOKEN not in written and "pg-s3cret-pw" not in written


def test_json_lines_carry_the_turn_they_were_logged_in() -> None:
    made, stream = handler(logs.JsonLines())
    log = logging.getLogger("test.logs.json")
    log.addHandler(made)
    session, run = logs.SESSION.set("tg:1"), logs.RUN.set("ab" * 16)
    try:
        log.warning("inside with %s", "sk-ant-key-of-the-bench")
    finally:
        logs.RUN.reset(run)
        logs.SESSION.reset(session)
        log.warning("outside")
        log.removeHandler(made)
    inside, outside = (json.loads(line) for line in stream.getvalue().splitlines())
    assert inside["message"] == "inside with [redacted]"
    assert (inside["session"], inside["run"], inside["trace"]) == ("tg:1", "ab" * 16, "ab" * 16)
    assert inside["level"] == "WARNING" and inside["logger"] == "test.logs.json"
    assert "session" not in outside and "run" not in outside


def test_a_process_logs_json_when_told_to(tmp_path: Path) -> None:
    """Run where no .env is, so only the environment below counts."""
    program = (
        "import logging; from bot.telemetry import logs; "
        "from bot.config.settings import load_settings; "
        "logs.configure(load_settings()); logging.getLogger('parley.test').warning('hello %s', "
        "'tok-" + "x" * 20 + "')"
    )
    env = {
        **os.environ,
        "PARLEY_LOG_FORMAT": "json",
        "PARLEY_API_TOKEN": "tok-" + "x" * 20,
    }
    done = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60,
        cwd=tmp_path,
    )  # fmt: skip
    (line,) = done.stderr.splitlines()
    assert json.loads(line)["message"] == "hello [redacted]"
