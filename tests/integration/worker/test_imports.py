"""A worker imports the SDKs of the configured provider and platforms only, and alembic only
when the schema is behind, and neither the MCP SDK nor trafilatura unless they are used: each
SDK costs up to a second and a half of start-up, which is also a worker's recovery time
whenever one is replaced.

The worker's composition runs in a process of its own (a fresh `sys.modules`): the model's
provider, the database opened as at start-up, and each platform's egress, once loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.store.database import upgrade
from tests.fakes.llm import ANTHROPIC_KEY, OPENAI_KEY

ROOT = Path(__file__).resolve().parents[3]
WATCHED = ("anthropic", "openai", "aiogram", "slack_sdk", "slack_bolt", "alembic")
# Loaded only when used: the MCP SDK with servers in mcp.json, trafilatura and the HTTP
# client of web_fetch at the first page, httpx (and the rich console its command line
# loads) only by `parley health web`, jsonschema at the first output schema checked, and
# PostgreSQL's dialect only on PostgreSQL (here SQLite).
NEVER_AT_START = (
    "mcp", "mcp_types", "trafilatura", "httpcore", "httpx", "rich", "jsonschema",
    "sqlalchemy.dialects.postgresql",
)  # fmt: skip
COMPOSE = f"""
import asyncio, json, sys
from redis.asyncio import Redis
import worker.jobs
from adapters.platforms.egresses import configured_egresses
from bot.assembly.agent import build_agent
from bot.config.settings import load_settings
from bot.store.database import open_database

async def main():
    settings = load_settings()
    build_agent(settings)
    database = await open_database(settings)
    redis = Redis.from_url(settings.redis_url)
    for egress in configured_egresses(settings, redis).values():
        await (await egress.ready()).aclose()
    await database.aclose()
    await redis.aclose()

asyncio.run(main())
print(json.dumps([name for name in {WATCHED + NEVER_AT_START!r} if name in sys.modules]))
"""

ANTHROPIC_TELEGRAM = {
    "PARLEY_MODEL": "claude-test",
    "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
    "TELEGRAM_BOT_TOKEN": "123456:TEST",
}
OPENAI_SLACK = {
    "PARLEY_MODEL": "gpt-4o",
    "OPENAI_API_KEY": OPENAI_KEY,
    "SLACK_BOT_TOKEN": "xoxb-test",
    "SLACK_SIGNING_SECRET": "secret",
}


def loaded_by_a_worker(configured: dict[str, str], redis_url: str, tmp_path: Path) -> list[str]:
    """Which of WATCHED the worker's composition for `configured` imported."""
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(ROOT),
        "REDIS_URL": redis_url,
        "DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/parley.db",
        **configured,
    }
    done = subprocess.run(
        [sys.executable, "-c", COMPOSE],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    ("configured", "loaded"),
    [
        (ANTHROPIC_TELEGRAM, ["anthropic", "aiogram"]),
        (OPENAI_SLACK, ["openai", "slack_sdk"]),
        ({"PARLEY_MODEL": "claude-test", "ANTHROPIC_API_KEY": ANTHROPIC_KEY}, ["anthropic"]),
    ],
    ids=["anthropic+telegram", "openai+slack", "anthropic+http"],
)
async def test_a_worker_loads_what_is_configured_and_nothing_else(
    configured: dict[str, str], loaded: list[str], redis_url: str, tmp_path: Path
) -> None:
    await upgrade(f"sqlite+aiosqlite:///{tmp_path}/parley.db", wait=0)  # as a new worker finds it
    assert loaded_by_a_worker(configured, redis_url, tmp_path) == loaded


def test_a_database_behind_the_code_is_migrated_with_alembic(
    redis_url: str, tmp_path: Path
) -> None:
    """The converse for alembic: on a fresh database the migrations have to run (alembic
    loads every dialect's DDL, PostgreSQL's among them)."""
    loaded = loaded_by_a_worker(ANTHROPIC_TELEGRAM, redis_url, tmp_path)
    assert [name for name in loaded if name in WATCHED] == ["anthropic", "aiogram", "alembic"]
