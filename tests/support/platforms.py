"""Parley with both chat platforms configured against their fakes: where tasks for any
session can be made, since a task for a platform nothing answers on is refused."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.slack.service import EVENTS_PATH
from tests.fakes.llm import FakeLLM
from tests.fakes.slack import FakeSlack
from tests.fakes.tg import FakeTelegram
from tests.support.redis_server import free_port
from tests.support.slack import slack_env
from tests.support.stack import Stack, serving, stack_env, web_settings
from tests.support.telegram import telegram_env


@contextlib.asynccontextmanager
async def both_platforms(
    redis_url: str,
    fake_llm: FakeLLM,
    telegram: FakeTelegram,
    slack: FakeSlack,
    database_url: str,
    tmp_path: Path,
    **extra: str,
) -> AsyncIterator[Stack]:
    """The web app with Telegram (long polling) and Slack (HTTP events) on their fakes."""
    port = free_port()
    platforms = {**telegram_env(telegram), **slack_env(slack)}
    env = stack_env(redis_url, fake_llm, database_url, **platforms, **extra)
    slack.events_url = f"http://127.0.0.1:{port}{EVENTS_PATH}"
    built = Stack(redis_url, fake_llm, tmp_path, env=env)
    async with serving(built, web_settings(env), port) as running:
        yield running


@pytest.fixture
async def platforms(
    redis_url: str,
    fake_llm: FakeLLM,
    fake_telegram: FakeTelegram,
    fake_slack: FakeSlack,
    database_url: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> AsyncIterator[Stack]:
    """`both_platforms`; parametrise indirectly with more environment."""
    extra = getattr(request, "param", {}) or {}
    async with both_platforms(
        redis_url, fake_llm, fake_telegram, fake_slack, database_url, tmp_path, **extra
    ) as running:
        yield running
