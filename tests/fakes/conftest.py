"""The real aiogram Bot on the fake Telegram of a test module (its `fake` fixture)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from tests.fakes.tg import TOKEN, FakeTelegram


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    session = AiohttpSession(api=TelegramAPIServer.from_base(fake.base_url))
    async with Bot(TOKEN, session=session) as client:
        yield client
