"""The record on real databases: every test here runs on SQLite and on PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config.pricing import Price
from bot.config.settings import Settings
from bot.store.database import Database, open_database
from tests.support.stack import database_for

PRICE = Price(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(tmp_path: Path, request: pytest.FixtureRequest) -> str:
    return database_for(request.param, tmp_path, request)


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[Database]:
    settings = Settings(_env_file=None, database_url=database_url, prices={"claude-test": PRICE})
    database = await open_database(settings)
    try:
        yield database
    finally:
        await database.aclose()
