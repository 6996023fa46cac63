"""Secrets given as files (`NAME_FILE`), as Docker and Kubernetes mount them: read as if set
directly, and every way a file can fail is one line naming the variable and the path, never
what the file holds."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.config.secret_files import MAX_SECRET_FILE
from bot.config.settings import ConfigError, load_settings, secret_variables
from bot.config.warnings import unknown_variables
from bot.telemetry.logs import secrets_of
from tests.support.config_errors import refusal
from tests.support.parley import run_parley

KEY = "sk-ant-from-a-file-0123456789"
ONE_VALUE = "a secret file holds one value"


def write(tmp_path: Path, content: bytes, name: str = "secret") -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


def test_every_secret_setting_takes_a_file() -> None:
    variables = set(secret_variables().values())
    assert {
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "PARLEY_API_TOKEN",
        "TELEGRAM_BOT_TOKEN",
        "TELEGRAM_WEBHOOK_SECRET",
        "SLACK_BOT_TOKEN",
        "SLACK_APP_TOKEN",
        "SLACK_SIGNING_SECRET",
        "PARLEY_SEARCH_API_KEY",
        "PARLEY_TRANSCRIBE_API_KEY",
        "PARLEY_EMBEDDINGS_API_KEY",
        "PARLEY_IMAGE_API_KEY",
        "PARLEY_SPEECH_API_KEY",
        "PARLEY_TRACE_KEY",
        "REDIS_URL",
        "PARLEY_REDIS_SENTINEL_PASSWORD",
        "DATABASE_URL",
    } == variables


def test_a_file_gives_the_value_without_its_trailing_newline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY_FILE", str(write(tmp_path, KEY.encode() + b"\n")))
    monkeypatch.setenv("PARLEY_API_TOKEN_FILE", str(write(tmp_path, b"tok-en-123\r\n", "t")))
    url = b"redis://:pass-word-9@redis:6379/0"
    monkeypatch.setenv("REDIS_URL_FILE", str(write(tmp_path, url, "r")))
    settings = load_settings(_env_file=None)
    assert settings.anthropic_api_key is not None and settings.api_token is not None
    assert settings.anthropic_api_key.get_secret_value() == KEY
    assert settings.api_token.get_secret_value() == "tok-en-123"
    assert settings.redis_url == url.decode()
    assert KEY not in repr(settings)
    assert {KEY, "tok-en-123", "pass-word-9"} <= set(secrets_of(settings))


def test_a_value_from_a_file_is_checked_as_one_set_directly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = write(tmp_path, b"not-a-bot-token\n")
    message = refusal(monkeypatch, TELEGRAM_BOT_TOKEN_FILE=str(path))
    assert message.startswith("TELEGRAM_BOT_TOKEN: not a bot token")
    assert "not-a-bot-token" not in message


def test_both_set_names_both(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = write(tmp_path, KEY.encode())
    message = refusal(monkeypatch, OPENAI_API_KEY="k-1", OPENAI_API_KEY_FILE=str(path))
    assert message == "OPENAI_API_KEY and OPENAI_API_KEY_FILE are both set; set only one of them"


def test_both_set_counts_the_env_file_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    env_file = write(tmp_path, b"PARLEY_API_TOKEN=tok-en-in-dotenv\n", ".env")
    monkeypatch.setenv("PARLEY_API_TOKEN_FILE", str(write(tmp_path, b"tok-en-from-file")))
    with pytest.raises(ConfigError, match="PARLEY_API_TOKEN and PARLEY_API_TOKEN_FILE"):
        load_settings(_env_file=env_file)


def test_an_empty_variable_beside_a_file_is_unset(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """As `.env.example` leaves ANTHROPIC_API_KEY: empty, so the file gives it."""
    env_file = write(tmp_path, b"ANTHROPIC_API_KEY=\n", ".env")
    monkeypatch.setenv("ANTHROPIC_API_KEY_FILE", str(write(tmp_path, KEY.encode())))
    settings = load_settings(_env_file=env_file)
    assert settings.anthropic_api_key is not None
    assert settings.anthropic_api_key.get_secret_value() == KEY


def test_a_file_variable_may_be_in_the_env_file(tmp_path: Path) -> None:
    secret = write(tmp_path, b"tok-en-from-file\n")
    env_file = write(tmp_path, f"PARLEY_API_TOKEN_FILE={secret}\n".encode(), ".env")
    settings = load_settings(_env_file=env_file)
    assert settings.api_token is not None
    assert settings.api_token.get_secret_value() == "tok-en-from-file"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (None, "cannot read {path} (No such file or directory)"),
        ("dir", "cannot read {path} (Is a directory)"),
        (b"", "{path} is empty"),
        (b"\n", "{path} is empty"),
        (b"x" * (MAX_SECRET_FILE + 1), "{path} is larger than 64 KiB; " + ONE_VALUE),
        (b"\xff\xfe-secret-\xff", "{path} is not UTF-8 text"),
    ],
    ids=["missing", "directory", "empty", "only-a-newline", "too-large", "not-text"],
)
def test_a_bad_file_is_one_line_naming_variable_and_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: bytes | str | None, problem: str
) -> None:
    path = tmp_path / "secret"
    if content == "dir":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    message = refusal(monkeypatch, SLACK_BOT_TOKEN_FILE=str(path))
    assert message == "SLACK_BOT_TOKEN_FILE: " + problem.format(path=path)
    assert "secret-" not in message.replace(str(path), "")


def without_root(check: Callable[[], str]) -> str:
    """What `check` returns, run in a child process that is not root: root reads every file
    whatever its mode, and CI runs as root. As root, the child becomes `nobody` first; its
    exception, if it raises one, is the answer, and the child's exit status says which."""
    nobody = pwd.getpwnam("nobody")
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child never returns into pytest)
        answer, status = "", 1
        try:
            os.close(reader)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(nobody.pw_gid)
                os.setuid(nobody.pw_uid)
            answer, status = check(), 0
        except BaseException as exc:  # pytest.fail raises a BaseException
            answer = f"{type(exc).__name__}: {exc}"
        finally:
            os.write(writer, answer.encode())
            os._exit(status)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        answer = pipe.read().decode()
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0, answer
    return answer


def key_or_refusal(monkeypatch: pytest.MonkeyPatch, path: Path) -> str:
    """The Anthropic key read from the file at `path`, or the one line refusing it."""
    monkeypatch.setenv("ANTHROPIC_API_KEY_FILE", str(path))
    try:
        key = load_settings(_env_file=None).anthropic_api_key
    except ConfigError as exc:
        return str(exc)
    assert key is not None
    return key.get_secret_value()


def test_an_unreadable_file_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a folder the child may enter (not under pytest's, which only root may), beside a
    readable file it does read: the file's own mode is what refuses it."""
    folder = Path(tempfile.mkdtemp(prefix="parley-secret-"))
    try:
        folder.chmod(0o755)
        readable = write(folder, KEY.encode(), "readable")
        readable.chmod(0o644)
        path = write(folder, KEY.encode())
        path.chmod(0)
        # Here first, so the child has imported all it needs: `nobody` may not be allowed
        # to read the interpreter's own library.
        assert key_or_refusal(monkeypatch, readable) == KEY
        assert "cannot read" in key_or_refusal(monkeypatch, folder / "absent")
        said = without_root(
            lambda: "\n".join(key_or_refusal(monkeypatch, file) for file in (readable, path))
        )
    finally:
        shutil.rmtree(folder)
    assert said.splitlines() == [
        KEY,
        f"ANTHROPIC_API_KEY_FILE: cannot read {path} (Permission denied)",
    ]


def test_file_variables_are_not_unknown() -> None:
    environ = {"PARLEY_API_TOKEN_FILE": "/run/secrets/t", "PARLEY_SEARCH_API_KEY_FILE": "/s"}
    assert unknown_variables(environ, None) == []
    assert unknown_variables({"PARLEY_MODEL_FILE": "/m"}, None) != []


@pytest.mark.e2e  # runs `python -m worker`
def test_the_cli_says_it_in_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ANTHROPIC_API_KEY_FILE": str(missing)}
    proc = run_parley("chat", env=env, cwd=tmp_path, input="", timeout=60)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line == (
        "parley: configuration error: ANTHROPIC_API_KEY_FILE: cannot read "
        f"{missing} (No such file or directory)"
    )
