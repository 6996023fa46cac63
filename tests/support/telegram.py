"""Parley with Telegram for end-to-end tests: the web app and workers (see tests.support.workers),
the fake Bot API and the fake model API, everything over real HTTP and a real Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fakes.llm import FakeLLM
from tests.fakes.tg import TOKEN, FakeTelegram
from tests.support.audio import speech_env, voice_env
from tests.support.images import image_env
from tests.support.redis_server import free_port
from tests.support.stack import Stack, serving, stack_env, web_settings

WEBHOOK_PATH = "/telegram/webhook"
WEBHOOK_SECRET = "s3cret-webhook-token"


@dataclass
class TelegramStack(Stack):
    telegram: FakeTelegram | None = None
    webhook_url: str = ""

    @property
    def tg(self) -> FakeTelegram:
        assert self.telegram is not None
        return self.telegram


def telegram_env(telegram: FakeTelegram, **extra: str) -> dict[str, str]:
    return {
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_URL": telegram.base_url,
        **extra,
    }


@pytest.fixture
async def tg_stack(
    redis_url: str,
    fake_llm: FakeLLM,
    fake_telegram: FakeTelegram,
    database_url: str,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> AsyncIterator[TelegramStack]:
    """Parametrise indirectly with extra environment; `webhook=1` serves Telegram by webhook,
    `voice=1` transcribes voice notes at the fake model API's endpoint, `images=1` offers
    `generate_image` at its images endpoint, `speech=1` says replies aloud at its speech
    endpoint."""
    extra: dict[str, str] = {
        "PARLEY_FILES_DIR": str(tmp_path / "files"),
        "PARLEY_WORKSPACE_DIR": str(tmp_path / "workspaces"),
    }
    extra |= dict(getattr(request, "param", {}) or {})
    port = free_port()
    if extra.pop("voice", ""):
        extra |= voice_env(fake_llm)
    if extra.pop("speech", ""):
        extra |= speech_env(fake_llm)
    if extra.pop("images", ""):
        extra |= image_env(fake_llm)
    if extra.pop("webhook", ""):
        extra["TELEGRAM_WEBHOOK_URL"] = f"http://127.0.0.1:{port}{WEBHOOK_PATH}"
        extra["TELEGRAM_WEBHOOK_SECRET"] = WEBHOOK_SECRET
    env = stack_env(redis_url, fake_llm, database_url, **telegram_env(fake_telegram, **extra))
    built = TelegramStack(redis_url, fake_llm, tmp_path, env=env, telegram=fake_telegram)
    built.webhook_url = extra.get("TELEGRAM_WEBHOOK_URL", "")
    async with serving(built, web_settings(env), port) as running:
        yield running
