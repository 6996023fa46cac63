"""An API run's answer waits briefly for the run's record and takes its metrics from there:
a record written while it waits is found, one never written leaves the metrics null within
the wait, and a database that cannot be read does too, without failing the answer. A real
SQLite database, written as a worker writes it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.http.run_metrics import answer_metrics, recorded_metrics
from bot.config.settings import Settings
from bot.store.database import Database, open_database
from bot.store.engine import make_engine
from bot.store.traces import Traces
from tests.support.runs import Seed, record, record_of

SEED = Seed(session="http:run", envelope="run-1", tools=("calculator", "calculator"))


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    url = f"sqlite+aiosqlite:///{tmp_path}/parley.db"
    database = await open_database(Settings(_env_file=None, database_url=url))
    try:
        yield database
    finally:
        await database.aclose()


async def test_a_record_written_while_the_answer_waits_gives_its_metrics(db: Database) -> None:
    traces = Traces(db.engine)
    run_id = record_of(SEED).id
    waiting = asyncio.create_task(recorded_metrics(traces, run_id))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    await record(db.history, SEED)
    metrics = await asyncio.wait_for(waiting, 2)
    found = await traces.of_run(run_id)
    assert found is not None and found.trace is not None
    assert metrics == answer_metrics(found)
    assert metrics is not None and metrics["latency_ms"] == 1000
    assert metrics["tool_calls"] == 2 and metrics["steps"] == 4
    assert metrics["reliability"] == found.trace["metrics"]["reliability"] == 100


async def test_a_record_never_written_leaves_the_metrics_null_in_time(db: Database) -> None:
    started = time.monotonic()
    assert await recorded_metrics(Traces(db.engine), "0" * 32, wait=0.3) is None
    assert 0.3 <= time.monotonic() - started < 2


async def test_a_database_that_cannot_be_read_leaves_the_metrics_null(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite+aiosqlite:///{tmp_path}/missing/parley.db")
    try:
        assert await recorded_metrics(Traces(engine), "0" * 32, wait=5) is None
    finally:
        await engine.dispose()
