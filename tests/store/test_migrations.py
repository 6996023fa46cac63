"""Migrations: up from empty, down to empty, matching the models, safe to run at once."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from bot.store import migrate
from bot.store import revision as schema
from bot.store.database import upgrade
from bot.store.engine import make_engine
from bot.store.schema import Base, modelled
from tests.support.parley import run_parley

TABLES = {
    "sessions", "messages", "runs", "confirmations", "people", "tasks", "memories", "grants",
    "context_messages", "message_files", "chat_settings", "chat_tools_off",
    "paired_people", "memory_vectors", "digest_sources", "digests_off", "evaluations",
    "evaluation_runs",
    "alembic_version",
}  # fmt: skip
# FTS5's table and its shadow tables, made by migration 0003 on SQLite only
FTS = {f"memories_fts{suffix}" for suffix in ("", "_data", "_idx", "_docsize", "_config")}


def expected_tables(url: str) -> set[str]:
    return TABLES | FTS if url.startswith("sqlite") else TABLES


async def tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        async with engine.connect() as connection:
            return set(await connection.run_sync(lambda c: inspect(c).get_table_names()))
    finally:
        await engine.dispose()


async def test_up_from_empty_matches_the_models_and_down_leaves_nothing(
    database_url: str,
) -> None:
    assert await migrate.current(database_url) is None
    await migrate.upgrade(database_url)
    assert await migrate.current(database_url) == migrate.head()
    assert await tables(database_url) == expected_tables(database_url)
    engine = make_engine(database_url)
    try:
        async with engine.connect() as connection:
            differences = await connection.run_sync(
                lambda c: compare_metadata(
                    MigrationContext.configure(
                        c, opts={"compare_type": True, "include_name": modelled}
                    ),
                    Base.metadata,
                )
            )
    finally:
        await engine.dispose()
    assert differences == []
    await migrate.downgrade(database_url, "base")
    assert await migrate.current(database_url) is None
    assert await tables(database_url) <= {"alembic_version"}
    await migrate.upgrade(database_url)  # and up again
    assert await migrate.current(database_url) == migrate.head()


async def test_the_head_a_process_checks_at_start_is_alembics(database_url: str) -> None:
    """Processes skip alembic when the schema is at `schema.HEAD`: a new migration must move it."""
    assert migrate.head() == schema.HEAD
    assert await schema.current(database_url) is None
    await upgrade(database_url, wait=0)
    assert await schema.current(database_url) == await migrate.current(database_url)
    await migrate.downgrade(database_url, "base")
    assert await schema.current(database_url) is None
    await upgrade(database_url, wait=0)  # an emptied schema is migrated again
    assert await tables(database_url) == expected_tables(database_url)


async def test_processes_starting_together_migrate_once(database_url: str) -> None:
    await asyncio.gather(*(migrate.upgrade(database_url) for _ in range(4)))
    assert await migrate.current(database_url) == migrate.head()


@pytest.mark.e2e  # runs `python -m worker`
def test_parley_migrate_goes_up_and_down(database_url: str, tmp_path: Path) -> None:
    def parley(*args: str, url: str = database_url) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "DATABASE_URL": url}
        return run_parley("migrate", *args, env=env, cwd=tmp_path)

    up, down = parley(), parley("base", "--down")
    assert up.returncode == 0 and up.stdout.strip().endswith(f"schema at {migrate.head()}")
    assert down.returncode == 0 and "schema at empty" in down.stdout
    away = parley(url="postgresql://parley:hunter2@127.0.0.1:1/parley")
    assert away.returncode == 1 and away.stderr.startswith("parley: no database at")
    assert "hunter2" not in away.stderr and len(away.stderr.splitlines()) == 1


async def test_sqlite_is_shared_safely_between_processes(tmp_path: Path) -> None:
    """WAL (readers never wait for the writer), a busy timeout, and foreign keys enforced."""
    engine = make_engine(f"sqlite:///{tmp_path}/nested/dir/parley.db")  # directories made
    try:
        async with engine.connect() as connection:
            values = [
                (await connection.exec_driver_sql(f"PRAGMA {name}")).scalar()
                for name in ("journal_mode", "busy_timeout", "foreign_keys")
            ]
    finally:
        await engine.dispose()
    assert values == ["wal", 30_000, 1]
    assert engine.dialect.driver == "aiosqlite"


# (finish reason, status as recorded before 0008, reliability before) → (status, reliability)
OUTCOMES = {
    "end_turn": (("completed", 95), ("completed", 95)),
    "doom_loop": (("completed", 100), ("looped", 50)),
    "timed_out": (("completed", 80), ("timed_out", 30)),
    "cancelled": (("completed", 100), ("stopped", 50)),
    "max_iterations": (("completed", 40), ("step_limit", 0)),
    "poisoned": (("skipped", 100), ("given_up", 50)),
    "nothing_pending": (("completed", 100), ("skipped", 100)),
    "error": (("failed", 60), ("failed", 10)),
    "awaiting_confirmation": (("waiting", 100), ("waiting", 100)),
}


async def test_runs_that_ended_without_an_answer_get_their_own_status_and_score(
    database_url: str,
) -> None:
    """Rows written before 0008 counted a loop, a timeout, a stop and a step cap as successes."""
    from datetime import UTC, datetime

    from sqlalchemy import insert, select

    from bot.store.history import RUNS, SESSIONS

    await migrate.upgrade(database_url, "0007")
    engine = make_engine(database_url)
    now = datetime.now(UTC)
    try:
        async with engine.begin() as db:
            await db.execute(insert(SESSIONS).values(key="tg:1", platform="telegram"))
            for n, (reason, ((status, score), _)) in enumerate(OUTCOMES.items()):
                trace = {"nodes": [], "edges": [], "metrics": {"reliability": score, "steps": 1}}
                await db.execute(
                    insert(RUNS).values(
                        id=f"{n:032x}", session_key="tg:1", envelope_ids=[str(n)],
                        trigger="message", model="m", status=status, finish_reason=reason,
                        started_at=now, finished_at=now, reliability=score, trace=trace,
                    )
                )  # fmt: skip
        await migrate.upgrade(database_url)
        async with engine.connect() as db:
            query = select(RUNS.c.finish_reason, RUNS.c.status, RUNS.c.reliability, RUNS.c.trace)
            rows = {row.finish_reason: row for row in await db.execute(query)}
        for reason, (_, (status, score)) in OUTCOMES.items():
            row = rows[reason]
            assert (row.status, row.reliability) == (status, score), reason
            assert row.trace["metrics"] == {"reliability": score, "steps": 1}, reason
        await migrate.downgrade(database_url, "0007")
        async with engine.connect() as db:
            query = select(RUNS.c.finish_reason, RUNS.c.status)
            statuses = {row.finish_reason: row.status for row in await db.execute(query)}
        assert statuses == {reason: before[0] for reason, (before, _) in OUTCOMES.items()}
    finally:
        await engine.dispose()


def test_revisions_are_numbered_in_order_so_a_newer_one_is_told_without_alembic() -> None:
    """`revision.newer` (readiness: a database a newer version migrated) compares numbers."""
    script = ScriptDirectory.from_config(migrate.scripts_config())
    chain = [found.revision for found in script.walk_revisions()]
    numbered = [f"{n:04d}" for n in range(1, len(chain) + 1)]
    assert list(reversed(chain)) == numbered
    assert schema.newer(f"{int(schema.HEAD) + 1:04d}")
    assert not schema.newer(schema.HEAD) and not schema.newer("0001")
