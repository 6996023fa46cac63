"""Pytest fixture for the fake Telegram Bot API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.tg.server import FakeTelegram


@pytest.fixture
async def fake_telegram() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake
