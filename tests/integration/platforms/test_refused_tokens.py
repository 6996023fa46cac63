"""A token Telegram or Slack refuses stops `parley web` (and `parley up`) with one line naming
the variable; a platform out of reach is retried while the web app keeps serving."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from pathlib import Path

import pytest

from tests.fakes.llm import FakeLLM
from tests.fakes.slack import BOT_TOKEN, SIGNING_SECRET, FakeSlack
from tests.fakes.tg import TOKEN, FakeTelegram
from tests.support.parley import PIPE, ParleyProcess, start_parley
from tests.support.redis_server import free_port
from tests.support.stack import stack_env

WRONG_TG = "7000001:wrong-secret-telegram-token"
WRONG_SLACK = "xoxb-wrong-secret-slack-token"
WRONG_APP = "xapp-wrong-secret-app-token"


async def start(command: str, env: dict[str, str], cwd: Path) -> ParleyProcess:
    return await start_parley(
        command,
        env={"PARLEY_HTTP_PORT": str(free_port()), **env, "PARLEY_LOG_LEVEL": "WARNING"},
        cwd=cwd,
        stdout=PIPE,
        stderr=PIPE,
        start_new_session=True,
    )


async def one_line_and_exit(proc: ParleyProcess, secret: str = "") -> str:
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 90)
    finally:
        if proc.returncode is None:  # still retrying a token that will never work
            os.killpg(proc.pid, signal.SIGKILL)  # with `parley up`'s children
            await proc.wait()
    stderr = err.decode()
    assert proc.returncode == 2, stderr
    assert "Traceback" not in stderr
    assert not secret or secret not in stderr + out.decode()
    assert len(stderr.strip().splitlines()) == 1, stderr
    (line,) = stderr.strip().splitlines()
    return line


@pytest.mark.parametrize("command", ["web", "up"])
async def test_a_refused_telegram_token_stops_with_one_line(
    command: str,
    redis_url: str,
    fake_llm: FakeLLM,
    fake_telegram: FakeTelegram,
    database_url: str,
    tmp_path: Path,
) -> None:
    env = stack_env(
        redis_url,
        fake_llm,
        database_url,
        TELEGRAM_BOT_TOKEN=WRONG_TG,
        TELEGRAM_API_URL=fake_telegram.base_url,
    )
    line = await one_line_and_exit(await start(command, env, tmp_path), WRONG_TG)
    assert line.startswith("parley: configuration error: TELEGRAM_BOT_TOKEN: Telegram refused")


async def test_a_refused_webhook_url_stops_with_one_line(
    redis_url: str,
    fake_llm: FakeLLM,
    fake_telegram: FakeTelegram,
    database_url: str,
    tmp_path: Path,
) -> None:
    fake_telegram.fail_next(
        "setWebhook", 400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook"
    )
    env = stack_env(
        redis_url,
        fake_llm,
        database_url,
        TELEGRAM_BOT_TOKEN=TOKEN,
        TELEGRAM_API_URL=fake_telegram.base_url,
        TELEGRAM_WEBHOOK_URL="http://bot.example/telegram/webhook",
    )
    line = await one_line_and_exit(await start("web", env, tmp_path), TOKEN)
    assert line == (
        "parley: configuration error: TELEGRAM_WEBHOOK_URL: Telegram refused it "
        "(Bad Request: bad webhook: An HTTPS URL must be provided for webhook)"
    )


async def test_a_port_in_use_is_one_line(
    redis_url: str, fake_llm: FakeLLM, database_url: str, tmp_path: Path
) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    env = stack_env(redis_url, fake_llm, database_url, PARLEY_HTTP_PORT=str(port))
    try:
        line = await one_line_and_exit(await start("web", env, tmp_path))
    finally:
        taken.close()
    assert line.startswith(
        f"parley: configuration error: PARLEY_HTTP_PORT: cannot listen on 127.0.0.1:{port}"
    )


@pytest.mark.parametrize(
    ("tokens", "variable"),
    [
        ({"SLACK_BOT_TOKEN": WRONG_SLACK, "SLACK_SIGNING_SECRET": SIGNING_SECRET}, "BOT"),
        ({"SLACK_BOT_TOKEN": WRONG_SLACK, "SLACK_APP_TOKEN": WRONG_APP}, "BOT"),
        ({"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": WRONG_APP}, "APP"),
    ],
    ids=["http-bot", "socket-bot", "socket-app"],
)
async def test_a_refused_slack_token_stops_with_one_line(
    tokens: dict[str, str],
    variable: str,
    redis_url: str,
    fake_llm: FakeLLM,
    fake_slack: FakeSlack,
    database_url: str,
    tmp_path: Path,
) -> None:
    env = stack_env(redis_url, fake_llm, database_url, SLACK_API_URL=fake_slack.base_url, **tokens)
    proc = await start("web", env, tmp_path)
    line = await one_line_and_exit(proc, "wrong-secret")
    assert line == (
        f"parley: configuration error: SLACK_{variable}_TOKEN: Slack refused the token "
        "(invalid_auth)"
    )


@pytest.mark.parametrize(
    ("platform", "retried"),
    [
        (
            {"TELEGRAM_BOT_TOKEN": WRONG_TG, "TELEGRAM_API_URL": "http://127.0.0.1:{port}"},
            "Telegram is not reachable yet",
        ),
        (
            {
                "SLACK_BOT_TOKEN": WRONG_SLACK,
                "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                "SLACK_API_URL": "http://127.0.0.1:{port}/api/",
            },
            "Slack auth.test is not reachable yet",
        ),
    ],
    ids=["telegram", "slack"],
)
async def test_a_platform_out_of_reach_is_retried(
    platform: dict[str, str],
    retried: str,
    redis_url: str,
    fake_llm: FakeLLM,
    database_url: str,
    tmp_path: Path,
) -> None:
    nobody = free_port()
    extra = {name: value.format(port=nobody) for name, value in platform.items()}
    proc = await start("web", stack_env(redis_url, fake_llm, database_url, **extra), tmp_path)
    assert proc.stderr is not None
    try:
        seen: list[str] = []
        while retried not in "".join(seen[-1:]):
            line = await asyncio.wait_for(proc.stderr.readline(), 90)
            assert line, f"parley web ended: {''.join(seen)}"
            seen.append(line.decode())
        assert proc.returncode is None  # still serving, still trying
        assert "wrong-secret" not in "".join(seen)
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0
