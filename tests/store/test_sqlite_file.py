"""A SQLite file deleted or replaced under a process that has it open (SQLite only)."""

from __future__ import annotations

import logging
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.config.settings import Settings
from bot.store.database import Database, open_database
from bot.store.sqlite_file import DatabaseFileGone
from bot.vocabulary.state import SessionState
from tests.store.test_history import assistant, run, user


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, database_url=f"sqlite:///{tmp_path}/data/parley.db")


@pytest.fixture
async def db(settings: Settings) -> AsyncIterator[Database]:
    database = await open_database(settings)
    try:
        yield database
    finally:
        await database.aclose()


def errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_deleted_file_is_reported_once_and_never_written_or_made_again(
    db: Database, settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    file = tmp_path / "data" / "parley.db"
    state = SessionState(messages=[user("a"), assistant("b")])
    await db.history.record(state, run("e1"))
    assert db.problem() is None
    for name in ("parley.db", "parley.db-wal", "parley.db-shm"):
        (tmp_path / "data" / name).unlink(missing_ok=True)  # the directory stays
    state.messages += [user("c"), assistant("d")]
    for _ in range(3):
        problem = db.problem()
        with pytest.raises(DatabaseFileGone, match=str(file)):
            await db.history.record(state, run("e2"))
    assert problem is not None and str(file) in problem and "gone" in problem
    assert not file.exists()  # no empty database made behind the operator's back
    assert len(errors(caplog)) == 1 and str(file) in errors(caplog)[0]
    restarted = await open_database(settings)  # a process started now makes a new one
    try:
        assert db.problem() is None
        await db.history.record(state, run("e3"))
        info = await restarted.archive.session("tg:1")
    finally:
        await restarted.aclose()
    assert info is not None and info.runs == 2 and info.messages == 3  # e2, e3; b, c, d
    assert "is back" in caplog.text


async def test_a_database_made_anew_at_the_path_is_followed(
    db: Database, settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    file = tmp_path / "data" / "parley.db"
    state = SessionState(messages=[user("a"), assistant("b")])
    await db.history.record(state, run("e1"))
    shutil.rmtree(tmp_path / "data")
    restarted = await open_database(settings)  # before this process looked again
    try:
        state.messages += [user("c"), assistant("d")]
        await db.history.record(state, run("e2"))
        info = await restarted.archive.session("tg:1")
    finally:
        await restarted.aclose()
    assert info is not None and info.runs == 1 and info.messages == 3  # e2; b, c, d
    assert db.problem() is None
    assert len(errors(caplog)) == 1 and "replaced" in errors(caplog)[0]
    assert str(file) in errors(caplog)[0]
