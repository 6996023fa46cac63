"""Redis over TLS and through Sentinel, as the settings read it: strictly, each mistake one
line naming the variable, the sentinels' password also from a file and kept out of logs."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config.redis_options import RedisSentinel, RedisTls
from bot.config.settings import load_settings
from bot.telemetry.logs import secrets_of
from tests.support.config_errors import refusal as one_line_refusal

TLS_URL = "rediss://:pw-of-redis@redis.internal:6380/2"


def refusal(monkeypatch: pytest.MonkeyPatch, **env: str) -> str:
    message = one_line_refusal(monkeypatch, **env)
    assert "pw-of-redis" not in message
    return message


def pem(tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    path.write_text("-----BEGIN CERTIFICATE-----\n")
    return str(path)


def test_tls_files_are_read_with_a_rediss_url(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("REDIS_URL", TLS_URL)
    monkeypatch.setenv("PARLEY_REDIS_TLS_CA", pem(tmp_path, "ca.crt"))
    monkeypatch.setenv("PARLEY_REDIS_TLS_CERT", pem(tmp_path, "client.crt"))
    monkeypatch.setenv("PARLEY_REDIS_TLS_KEY", pem(tmp_path, "client.key"))
    monkeypatch.setenv("PARLEY_REDIS_TLS_CHECK_HOSTNAME", "false")
    tls = load_settings(_env_file=None).redis_tls
    assert tls == RedisTls(
        tmp_path / "ca.crt", tmp_path / "client.crt", tmp_path / "client.key", False
    )
    assert tls.kwargs()["ssl_cert_reqs"] == "required"  # the server is always verified
    assert tls.kwargs()["ssl_ca_certs"] == str(tmp_path / "ca.crt")


@pytest.mark.parametrize(
    ("env", "said"),
    [
        (
            {"REDIS_URL": "redis://localhost/0", "PARLEY_REDIS_TLS_CA": "ca.crt"},
            "PARLEY_REDIS_TLS_CA: set, but REDIS_URL does not start with rediss://",
        ),
        (
            {"REDIS_URL": TLS_URL, "PARLEY_REDIS_TLS_CA": "/nowhere/ca.crt"},
            "PARLEY_REDIS_TLS_CA: no readable file at /nowhere/ca.crt",
        ),
        (
            {"REDIS_URL": TLS_URL, "PARLEY_REDIS_TLS_CERT": "client.crt"},
            "PARLEY_REDIS_TLS_KEY: a client certificate and its key go together",
        ),
        (
            {"PARLEY_REDIS_SENTINELS": "a:26379"},
            "PARLEY_REDIS_SENTINEL_MASTER: the sentinels need the master's name",
        ),
        (
            {"PARLEY_REDIS_SENTINEL_MASTER": "mymaster"},
            "PARLEY_REDIS_SENTINELS: the master's name needs sentinels to ask",
        ),
        (
            {"PARLEY_REDIS_SENTINELS": "a:26379,b:port", "PARLEY_REDIS_SENTINEL_MASTER": "m"},
            "PARLEY_REDIS_SENTINELS: 'b:port' is not host:port",
        ),
        (
            {"PARLEY_REDIS_SENTINELS": "redis://a:1", "PARLEY_REDIS_SENTINEL_MASTER": "m"},
            "PARLEY_REDIS_SENTINELS: 'redis://a:1' is not host:port",
        ),
        (
            {"PARLEY_REDIS_SENTINELS": "a", "PARLEY_REDIS_SENTINEL_MASTER": "my master"},
            "PARLEY_REDIS_SENTINEL_MASTER: letters, digits, '.', '_' and '-' only",
        ),
        (
            {
                "REDIS_URL": "unix:///run/redis.sock",
                "PARLEY_REDIS_SENTINELS": "a",
                "PARLEY_REDIS_SENTINEL_MASTER": "m",
            },
            "REDIS_URL: Sentinel reaches the master over TCP, not unix://",
        ),
    ],
)
def test_each_mistake_is_one_line_naming_its_variable(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    env: dict[str, str],
    said: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ca.crt").write_text("x")
    (tmp_path / "client.crt").write_text("x")
    assert refusal(monkeypatch, **env) == said


def test_sentinels_their_master_and_their_password_from_a_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    secret = tmp_path / "sentinel-password"
    secret.write_text("sentinels-own-secret\n")
    monkeypatch.setenv("REDIS_URL", "redis://:pw-of-redis@ignored/3")
    monkeypatch.setenv("PARLEY_REDIS_SENTINELS", " s1.internal:26380, [fd00::7]:26379,s3 ")
    monkeypatch.setenv("PARLEY_REDIS_SENTINEL_MASTER", "parley-main")
    monkeypatch.setenv("PARLEY_REDIS_SENTINEL_PASSWORD_FILE", str(secret))
    settings = load_settings(_env_file=None)
    assert settings.redis_sentinel == RedisSentinel(
        (("s1.internal", 26380), ("fd00::7", 26379), ("s3", 26379)),
        "parley-main",
        "sentinels-own-secret",
    )
    assert "sentinels-own-secret" in secrets_of(settings)  # taken out of every log line
    assert "sentinels-own-secret" not in repr(settings)


def test_without_sentinels_there_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://localhost:6379/0")
    assert load_settings(_env_file=None).redis_sentinel is None
