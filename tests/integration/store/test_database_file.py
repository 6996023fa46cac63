"""The SQLite file deleted under running processes: a worker process says so once, as an
error naming the file, the web's /readyz answers 503 naming it, and what the worker answered
meanwhile reaches the database that a process started afterwards makes at the same path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.store.database import open_database
from tests.integration.store.test_history import echo
from tests.support.stack import Stack, idle, send, texts, web_settings
from tests.support.waiting import until


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path}/data/parley.db"


async def test_a_data_directory_deleted_under_a_worker_is_reported_and_caught_up(
    stack: Stack,
) -> None:
    await stack.start_worker_process()
    stack.fake.responder = echo
    data = stack.tmp / "data"
    file = str(data / "parley.db")
    log = stack.tmp / "worker-0.log"
    async with stack.client() as client:
        session = await stack.session(client)
        await send(client, session, "first apple")
        await idle(stack.redis_url)
        assert (await client.get("/healthz")).status_code == 200
        shutil.rmtree(data)
        waited = await until(lambda: f"{file} is gone" in log.read_text(), "the deletion reported")
        print(f"\nthe worker reported the deleted file after {waited:.2f} s")
        health = await client.get("/readyz")
        records = await client.get("/api/sessions")  # the record is away: come back later
        answer = await send(client, session, "then pear")  # answered all the same
        await idle(stack.redis_url)
        # a process started now (a restarted web) makes a new database at the path
        database = await open_database(web_settings(stack.env))
        try:
            healthy = await client.get("/readyz")
            await send(client, session, "last plum")
            await idle(stack.redis_url)
            detail = await database.archive.session(f"http:{session}")
        finally:
            await database.aclose()
    assert health.status_code == 503 and file in health.json()["failed"]["database"]
    assert records.status_code == 503 and records.headers["Retry-After"] == "5"
    assert records.json() == {"error": "the database is unavailable; try again shortly"}
    assert texts(answer) == "you said pear"
    assert healthy.status_code == 200
    errors = [line for line in log.read_text().splitlines() if " ERROR " in line]
    assert len(errors) == 1 and file in errors[0], json.dumps(errors, indent=1)
    assert detail is not None and detail.runs == 2
    said = [m.text.split("\n")[-1] for m in detail.recent]
    assert said[-4:] == ["then pear", "you said pear", "last plum", "you said plum"]
