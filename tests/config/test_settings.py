"""Settings: fixed variable names, and one clear line for bad values."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bot.config.settings import ConfigError, load_settings
from bot.config.warnings import nobody_pairs
from tests.support import parley
from tests.support.redis_server import free_port


def test_fixed_names_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARLEY_MODEL", "openai:llama3")
    monkeypatch.setenv("OPENAI_API_KEY", "k-123")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:1/v1")
    monkeypatch.setenv("REDIS_URL", "redis://r:1/2")
    monkeypatch.setenv("DATABASE_URL", "sqlite+aiosqlite:///x.db")
    monkeypatch.setenv("PARLEY_POLICY", '[{"action": "ask", "tool": "calc*"}]')
    settings = load_settings()
    assert settings.model == "openai:llama3"
    assert settings.openai_api_key is not None
    assert settings.openai_api_key.get_secret_value() == "k-123"
    assert "k-123" not in repr(settings)
    assert settings.openai_base_url == "http://localhost:1/v1"
    assert settings.redis_url == "redis://r:1/2"
    assert settings.database_url == "sqlite+aiosqlite:///x.db"
    assert settings.policy[0].action == "ask"


def test_bad_values_name_their_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARLEY_MAX_ITERATIONS", "many")
    monkeypatch.setenv("PARLEY_TIMEZONE", "Mars/Olympus")
    monkeypatch.setenv("PARLEY_POLICY", '[{"action": "perhaps"}]')
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert "PARLEY_MAX_ITERATIONS: Input should be a valid integer" in message
    assert "PARLEY_TIMEZONE: unknown IANA time zone 'Mars/Olympus'" in message
    assert "PARLEY_POLICY: Input should be 'allow', 'deny' or 'ask'" in message
    assert "\n" not in message


def test_empty_values_count_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    assert load_settings().anthropic_api_key is None


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (
            {"PARLEY_MAX_TOKENS": "0"},
            "PARLEY_MAX_TOKENS: Input should be greater than or equal to 1",
        ),
        ({"PARLEY_MODEL": "llama3"}, "PARLEY_MODEL: cannot tell which API serves 'llama3'"),
        ({"PARLEY_MODEL": "claude-x"}, "ANTHROPIC_API_KEY: not set, and model 'claude-x' needs it"),
        (
            {"ANTHROPIC_API_KEY": "k", "PARLEY_FALLBACK_MODELS": "claude-y, gpt-4o"},
            "OPENAI_API_KEY: not set, and model 'gpt-4o' needs it",
        ),
        (
            {"ANTHROPIC_API_KEY": "k", "PARLEY_MODELS": "fast=mystery"},
            "PARLEY_MODELS: cannot tell which API serves 'mystery'",
        ),
        (
            {"ANTHROPIC_API_KEY": "k", "PARLEY_MODELS": "a b=claude-y"},
            "PARLEY_MODELS: 'a b=claude-y': write alias=name",
        ),
    ],
)
@pytest.mark.e2e  # runs `python -m worker`
def test_cli_prints_one_line_and_exits_2(
    env: dict[str, str], expected: str, tmp_path: Path
) -> None:
    clean = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env}
    proc = parley.run_parley("chat", env=clean, cwd=tmp_path, input="", timeout=60)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"parley: configuration error: {expected}")
    assert "Traceback" not in proc.stderr


def test_people_lists_take_commas_or_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARLEY_ALLOWED_USERS", "tg:1, slack:U2")
    monkeypatch.setenv("PARLEY_ADMINS", '["tg:9"]')
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123:abc")
    settings = load_settings()
    assert settings.allowed_users == ["tg:1", "slack:U2"]
    assert settings.may_use("tg:1") and settings.may_use("tg:9")
    assert not settings.may_use("tg:2")
    assert settings.is_admin("tg:9") and not settings.is_admin("tg:1")
    assert "123:abc" not in repr(settings)


def test_everyone_may_use_an_unrestricted_bot(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().may_use("tg:12345")


def test_people_need_a_platform_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PARLEY_ADMINS", "12345")
    with pytest.raises(ConfigError, match="PARLEY_ADMINS: '12345' needs a platform prefix"):
        load_settings()


def test_a_slack_bot_needs_socket_mode_or_a_signing_secret() -> None:
    with pytest.raises(ConfigError, match="SLACK_SIGNING_SECRET"):
        load_settings(_env_file=None, slack_bot_token="xoxb-1")
    assert load_settings(_env_file=None, slack_bot_token="xoxb-1", slack_app_token="xapp-1")
    assert load_settings(_env_file=None, slack_bot_token="xoxb-1", slack_signing_secret="s")


SECRET = "hunter2-secret"
BROKEN_TOOLS = 'raise RuntimeError("tools could not start\\nsecond line")\n'


def run_parley(command: str, env: dict[str, str], home: Path) -> subprocess.CompletedProcess[str]:
    """The real `parley COMMAND` in an environment of only `env` (no .env file: cwd is empty)."""
    clean = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(home), **env}
    return parley.run_parley(command, env=clean, cwd=home, input="", timeout=60)


REDIS_GARBAGE = {"REDIS_URL": f"garbage://:{SECRET}@x"}
DATABASE_MYSQL = {"DATABASE_URL": f"mysql://u:{SECRET}@h/db"}
TASK = '[{"name": "digest", "when": "%s", "session": "tg:1", "prompt": "Say hello"}]'


@pytest.mark.parametrize(
    ("command", "env", "expected"),
    [
        ("worker", REDIS_GARBAGE, "REDIS_URL: not a Redis URL"),
        ("web", REDIS_GARBAGE, "REDIS_URL: not a Redis URL"),
        ("up", REDIS_GARBAGE, "REDIS_URL: not a Redis URL"),
        ("worker", {"REDIS_URL": f"redis://:{SECRET}@h:port/0"}, "REDIS_URL: the port is not"),
        ("web", {"REDIS_URL": f"redis://:{SECRET}@h/zero"}, "REDIS_URL: the database must"),
        ("worker", DATABASE_MYSQL, "DATABASE_URL: 'mysql' is not supported"),
        ("web", DATABASE_MYSQL, "DATABASE_URL: 'mysql' is not supported"),
        ("up", DATABASE_MYSQL, "DATABASE_URL: 'mysql' is not supported"),
        ("migrate", {"DATABASE_URL": f"{SECRET}:::"}, "DATABASE_URL: not a database URL"),
        ("worker", {"PARLEY_POLICY": "[{bad"}, "PARLEY_POLICY: not valid JSON"),
        ("web", {"PARLEY_PRICES": "{x"}, "PARLEY_PRICES: not valid JSON"),
        ("chat", {"PARLEY_TOOL_MODULES": "[nope"}, "PARLEY_TOOL_MODULES: not valid JSON"),
        ("web", {"TELEGRAM_BOT_TOKEN": SECRET}, "TELEGRAM_BOT_TOKEN: not a bot token"),
        ("chat", {"ANTHROPIC_BASE_URL": ":::"}, "ANTHROPIC_BASE_URL: not an http(s) URL"),
        ("web", {"SLACK_API_URL": "slack.com/api"}, "SLACK_API_URL: not an http(s) URL"),
        (
            "worker",
            {"DATABASE_URL": f"postgresql://u:{SECRET}@127.0.0.1:99999/d"},
            "DATABASE_URL: the port must be a number from 1 to 65535",
        ),
        (
            "web",
            {"DATABASE_URL": f"postgresql+nosuch://u:{SECRET}@h/d"},
            "DATABASE_URL: no driver 'nosuch' for postgresql",
        ),
        ("migrate", {"PARLEY_TURN_TIMEOUT": "inf"}, "PARLEY_TURN_TIMEOUT: Input should be a fin"),
        ("worker", {"PARLEY_LLM_TIMEOUT": "nan"}, "PARLEY_LLM_TIMEOUT: Input should be a finite"),
        ("web", {"PARLEY_FETCH_TIMEOUT": "-5"}, "PARLEY_FETCH_TIMEOUT: Input should be greater"),
        (
            "scheduler",
            {"PARLEY_TASKS": TASK % "every 1 minute"},
            "PARLEY_TASKS: task 'digest': That runs every 1 minute",
        ),
    ],
)
@pytest.mark.e2e  # runs `python -m worker`
def test_every_command_stops_with_one_line(
    command: str, env: dict[str, str], expected: str, tmp_path: Path
) -> None:
    proc = run_parley(command, {"ANTHROPIC_API_KEY": "k", **env}, tmp_path)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"parley: configuration error: {expected}")
    assert "Traceback" not in proc.stderr
    assert SECRET not in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("command", "module", "expected"),
    [
        ("worker", BROKEN_TOOLS, "importing 'my_tools' failed: RuntimeError: tools could not"),
        ("up", BROKEN_TOOLS, "importing 'my_tools' failed: RuntimeError: tools could not"),
        (
            "chat",
            "from bot.tools.builtin import builtin_tools\nTOOLS = builtin_tools()\n",
            "tool '",
        ),
    ],
)
@pytest.mark.e2e  # runs `python -m worker`
def test_a_tool_module_that_fails_is_one_line(
    command: str, module: str, expected: str, tmp_path: Path
) -> None:
    (tmp_path / "my_tools.py").write_text(module)
    env = {"ANTHROPIC_API_KEY": "k", "PARLEY_TOOL_MODULES": '["my_tools"]'}
    proc = run_parley(command, env, tmp_path)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"parley: configuration error: PARLEY_TOOL_MODULES: {expected}")
    assert "Traceback" not in proc.stderr


def test_accepted_redis_and_database_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    for redis_url in ("redis://h:1/2", "rediss://:pw@h:6380/0", "unix:///run/r.sock?db=3"):
        for database in ("sqlite:///x.db", "sqlite+aiosqlite:///x.db", "postgresql://u@h/d"):
            monkeypatch.setenv("REDIS_URL", redis_url)
            monkeypatch.setenv("DATABASE_URL", database)
            settings = load_settings(_env_file=None)
            assert (settings.redis_url, settings.database_url) == (redis_url, database)
    monkeypatch.setenv("DATABASE_URL", "postgresql+asyncpg://u:p@h:5432/d")
    assert load_settings(_env_file=None).database_url.startswith("postgresql+asyncpg://")


@pytest.mark.e2e  # runs `python -m worker`
def test_up_never_shows_the_redis_password(tmp_path: Path) -> None:
    url = f"redis://:{SECRET}@127.0.0.2:{free_port()}/0"  # not this machine's name: not started
    proc = run_parley("up", {"ANTHROPIC_API_KEY": "k", "REDIS_URL": url}, tmp_path)
    assert proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("parley: Redis does not answer at redis://:***@127.0.0.2:")
    assert SECRET not in proc.stdout + proc.stderr


@pytest.mark.parametrize("url", ["redis://h:6379/٣", "redis://h:6379/²", "unix:///r.sock?db=¹"])
def test_a_redis_database_in_other_digits_is_refused(
    monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    """`str.isdigit` takes these; Redis numbers its databases in ASCII digits."""
    monkeypatch.setenv("REDIS_URL", url)
    with pytest.raises(ConfigError, match=r"^REDIS_URL: the database must be a number"):
        load_settings(_env_file=None)


@pytest.mark.parametrize(
    "value",
    [
        '["a", "b", "c", "d", "e"]',  # Slack shows 4 at most
        '[{"title": "Standup"}]',
        '[{"title": "T", "message": "M", "emoji": "x"}]',
        '["ok", 7]',
        '[""]',
        '{"title": "T", "message": "M"}',
        "What can you do?",
    ],
)
def test_suggested_prompts_are_read_strictly(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("PARLEY_SLACK_SUGGESTED_PROMPTS", value)
    with pytest.raises(ConfigError) as caught:
        load_settings(_env_file=None)
    message = str(caught.value)
    assert message.startswith("PARLEY_SLACK_SUGGESTED_PROMPTS: ") and "\n" not in message


def test_suggested_prompts_take_text_or_a_title_and_a_message(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert len(load_settings(_env_file=None).slack_suggested_prompts) == 3  # the defaults
    monkeypatch.setenv(
        "PARLEY_SLACK_SUGGESTED_PROMPTS", '["Hi?", {"title": "Standup", "message": "Notes"}]'
    )
    prompts = load_settings(_env_file=None).slack_suggested_prompts
    assert [p.model_dump() for p in prompts] == [
        {"title": "Hi?", "message": "Hi?"},
        {"title": "Standup", "message": "Notes"},
    ]


def test_the_dm_policy_is_one_of_three_and_a_code_lives_an_hour(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = load_settings(_env_file=None)
    assert settings.dm_policy is None and settings.pairing_code_ttl == 3600
    monkeypatch.setenv("PARLEY_DM_POLICY", "pairing")
    assert load_settings(_env_file=None).dm_policy == "pairing"
    monkeypatch.setenv("PARLEY_DM_POLICY", "strangers")
    with pytest.raises(ConfigError) as caught:
        load_settings(_env_file=None)
    assert str(caught.value).startswith("PARLEY_DM_POLICY: ")
    assert "'allowlist', 'pairing' or 'open'" in str(caught.value)
    monkeypatch.setenv("PARLEY_DM_POLICY", "open")
    monkeypatch.setenv("PARLEY_PAIRING_CODE_TTL", "0")
    with pytest.raises(ConfigError, match=r"^PARLEY_PAIRING_CODE_TTL: "):
        load_settings(_env_file=None)


def test_pairing_without_admins_is_a_warning() -> None:
    alone = load_settings(_env_file=None, dm_policy="pairing")
    (line,) = nobody_pairs(alone)
    assert line.startswith("PARLEY_DM_POLICY is pairing but PARLEY_ADMINS is empty")
    assert nobody_pairs(load_settings(_env_file=None, dm_policy="pairing", admins=["tg:1"])) == []
    assert nobody_pairs(load_settings(_env_file=None)) == []


def test_the_helpers_bounds_are_refused_out_of_range(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each of a helper's bounds is a setting with a default, and one it cannot work with
    stops the process with a line naming it."""
    settings = load_settings()
    assert (settings.delegate_steps, settings.delegate_tokens, settings.delegate_timeout) == (
        10,
        50_000,
        120.0,
    )
    assert (settings.delegate_concurrency, settings.delegate_depth) == (4, 1)
    monkeypatch.setenv("PARLEY_DELEGATE_TIMEOUT", "0")
    monkeypatch.setenv("PARLEY_DELEGATE_CONCURRENCY", "-1")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert "PARLEY_DELEGATE_TIMEOUT: Input should be greater than 0" in message
    assert "PARLEY_DELEGATE_CONCURRENCY: Input should be greater than or equal to 1" in message
    assert "\n" not in message


@pytest.mark.parametrize("value", ["not-a-key", "Zm9v" * 10, ", ,"])
def test_a_trace_key_that_is_no_key_is_one_line_without_the_value(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("PARLEY_TRACE_KEY", value)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    message = str(caught.value)
    assert message.startswith("PARLEY_TRACE_KEY: ") and "\n" not in message
    assert "`parley trace-key` makes one" in message and value not in message


def test_parley_trace_key_makes_a_key_parley_takes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    made = parley.run_parley("trace-key", env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    first = made.stdout.strip()
    second = parley.run_parley("trace-key", env={"PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert len(first) == 44 and second.stdout.strip() != first
    monkeypatch.setenv("PARLEY_TRACE_KEY", f"{first}, {second.stdout.strip()}")
    assert load_settings().trace_key is not None
