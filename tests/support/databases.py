"""Fixtures for tests of what Parley keeps in SQL, run on both databases it supports.

A conftest imports them (`from tests.support.databases import each_database, opened`);
their names as fixtures are `database_url` and `db`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config.settings import Settings
from bot.store.database import Database, open_database
from bot.tools.base import ToolContext
from bot.tools.executor import ToolExecutor, ToolOutcome
from bot.vocabulary.messages import ToolUseBlock
from tests.support.stack import database_for


@pytest.fixture(name="database_url", params=["sqlite", "postgresql"])
def each_database(tmp_path: Path, request: pytest.FixtureRequest) -> str:
    return database_for(request.param, tmp_path, request)


@pytest.fixture(name="db")
async def opened(database_url: str) -> AsyncIterator[Database]:
    database = await open_database(Settings(_env_file=None, database_url=database_url))
    try:
        yield database
    finally:
        await database.aclose()


async def call(
    executor: ToolExecutor, ctx: ToolContext, name: str, **arguments: object
) -> ToolOutcome:
    """One call as the model makes it, through the executor."""
    block = ToolUseBlock(id=f"c-{name}", name=name, input=dict(arguments))
    (outcome,) = await executor.run_all([block], ctx, {})
    return outcome
