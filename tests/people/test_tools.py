"""`set_preferences` through the executor, as the model calls it, on both databases."""

from __future__ import annotations

from redis.asyncio import Redis

from bot.assembly.stores import ToolStores
from bot.config.settings import Settings
from bot.people.preferences import ModelChoices
from bot.people.tools import people_tools
from bot.store.database import Database
from bot.tools.base import ToolContext, ToolRegistry
from bot.tools.executor import ToolExecutor
from bot.vocabulary.envelope import Sender
from tests.support.databases import call

SETTINGS = Settings(_env_file=None, model="claude-sonnet-4-5", user_models=["claude-haiku-4-5"])


async def test_the_tool_sets_checks_and_clears(db: Database) -> None:
    services = ToolStores.open(db.engine, Redis.from_url("redis://127.0.0.1:1"))
    ctx = ToolContext("tg:1", Sender(id="tg:1", name="Ann"))
    registry = ToolRegistry(people_tools(services.people, ModelChoices.of(SETTINGS)))
    executor = ToolExecutor(registry, timeout=20, concurrency=2, output_limit=16_000)
    done = await call(
        executor, ctx, "set_preferences", language="Portuguese", model="claude-haiku-4-5"
    )
    assert not done.is_error
    assert done.content == (
        "Preferences now: language Portuguese; no instruction; model claude-haiku-4-5; "
        "time zone the default."
    )
    refused = await call(executor, ctx, "set_preferences", model="claude-opus-4-1")
    assert refused.is_error and "You may choose: claude-haiku-4-5" in refused.content
    nothing = await call(executor, ctx, "set_preferences")
    assert nothing.is_error and "Nothing to set" in nothing.content
    cleared = await call(executor, ctx, "set_preferences", language="", instruction="be brief")
    assert "language not set; instruction 'be brief'" in cleared.content
    assert (await services.people.preferences("tg:1")).model == "claude-haiku-4-5"
