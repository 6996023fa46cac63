"""A session runner in the test's own process, as a worker builds one: a real mailbox in
Redis, the agent against the fake model, the record (and the stores the turns read and the
tools are built on) in a real database. For the tests that set up crash windows by hand,
where a killed process could not hit them reliably."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from arq.connections import RedisSettings, create_pool

from adapters.http.egress import HttpEgress
from bot.assembly.agent import build_agent
from bot.assembly.stores import ToolStores
from bot.config.settings import Settings
from bot.mailbox.inbox import Mailbox
from bot.redis.confirmations import Confirmations
from bot.session.deps import RunnerDeps, SessionStores
from bot.session.egress import PlatformEgress
from bot.session.runner import SessionRunner
from bot.store.database import Database, open_database
from tests.fakes.llm import ANTHROPIC_KEY, FakeLLM


@dataclass
class Rig:
    runner: SessionRunner
    mailbox: Mailbox
    database: Database
    fake: FakeLLM
    stores: SessionStores  # the runner's own, when it was given them


async def no_expiry(confirmation_id: str, ttl: float) -> None:
    """Expiries are not scheduled: these tests decide every confirmation themselves."""


@asynccontextmanager
async def runner_rig(
    redis_url: str, database_url: str, fake: FakeLLM, *, services: bool = False, **settings: Any
) -> AsyncIterator[Rig]:
    """The rig; with `services`, the runner's turns reach the database's tasks, people,
    memories and grants, and its agent has the tools built on them, as a worker's do."""
    configured = Settings(
        _env_file=None,
        model="claude-test",
        anthropic_api_key=ANTHROPIC_KEY,
        anthropic_base_url=fake.anthropic_base_url,
        redis_url=redis_url,
        database_url=database_url,
        **settings,
    )
    pool = await create_pool(RedisSettings.from_dsn(redis_url))
    database = await open_database(configured)
    mailbox = Mailbox(pool, pool)
    stores = SessionStores.open(database.engine, pool)
    tools = ToolStores(stores.tasks, stores.people, stores.recall)
    agent = build_agent(configured, stores=tools if services else None)
    deps = RunnerDeps(
        configured, mailbox, agent, PlatformEgress(HttpEgress(pool), {}), Confirmations(pool),
        no_expiry, database.history, stores=stores if services else None,
    )  # fmt: skip
    try:
        yield Rig(SessionRunner(deps), mailbox, database, fake, stores)
    finally:
        await agent.aclose()
        await database.aclose()
        await pool.aclose()
