"""`parley backup`: a consistent, checked copy of a SQLite database, or a clear refusal."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import threading
from pathlib import Path

import pytest

from tests.support.parley import run_parley
from tests.support.stack import ROOT
from worker.backup import BackupRefused, back_up


def database(path: Path, rows: int = 3) -> str:
    """A SQLite file with a schema revision and some sessions and messages; its URL."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE alembic_version (version_num TEXT)")
        db.execute("INSERT INTO alembic_version VALUES ('0013')")
        db.execute("CREATE TABLE sessions (key TEXT PRIMARY KEY)")
        db.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, body TEXT)")
        db.executemany("INSERT INTO sessions VALUES (?)", [(f"s{n}",) for n in range(2)])
        db.executemany("INSERT INTO messages (body) VALUES (?)", [("x",)] * rows)
        db.commit()
    return f"sqlite+aiosqlite:///{path}"


def test_a_copy_holds_what_the_database_holds_and_says_so(tmp_path: Path) -> None:
    url = database(tmp_path / "parley.db")
    copied = back_up(url, tmp_path / "copy.db")
    assert copied.line() == (
        f"backed up {tmp_path / 'parley.db'} to {tmp_path / 'copy.db'} "
        "(schema 0013, 2 sessions, 3 messages)"
    )
    with contextlib.closing(sqlite3.connect(tmp_path / "copy.db")) as db:
        assert db.execute("SELECT COUNT(*) FROM messages").fetchone() == (3,)


def test_a_folder_gets_a_file_named_as_the_database(tmp_path: Path) -> None:
    url = database(tmp_path / "parley.db")
    (tmp_path / "backups").mkdir()
    assert back_up(url, tmp_path / "backups").copy == tmp_path / "backups" / "parley.db"


def test_a_copy_made_while_a_process_writes_is_a_consistent_snapshot(tmp_path: Path) -> None:
    """Each write adds a message and its session together: a torn copy would hold one
    without the other."""
    url = database(tmp_path / "parley.db", rows=0)
    stop = threading.Event()

    def write() -> None:
        with contextlib.closing(sqlite3.connect(tmp_path / "parley.db", timeout=30)) as db:
            n = 0
            while not stop.is_set():
                with db:
                    db.execute("INSERT INTO sessions VALUES (?)", (f"w{n}",))
                    db.execute("INSERT INTO messages (body) VALUES (?)", (f"w{n}",))
                n += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        copies = [back_up(url, tmp_path / f"copy{n}.db") for n in range(5)]
    finally:
        stop.set()
        writer.join()
    assert [c.sessions - 2 for c in copies] == [c.messages for c in copies]
    assert copies[-1].messages > 0  # the writer did write while the copies were made


def test_what_it_refuses(tmp_path: Path) -> None:
    url = database(tmp_path / "parley.db")
    (tmp_path / "taken.db").write_bytes(b"an older backup")
    refusals = {
        "missing": (f"sqlite:///{tmp_path}/typo.db", tmp_path / "a.db"),
        "taken": (url, tmp_path / "taken.db"),
        "no folder": (url, tmp_path / "nowhere" / "a.db"),
        "postgresql": ("postgresql+asyncpg://parley:hunter2@db/parley", tmp_path / "b.db"),
    }
    said = {}
    for name, (source, destination) in refusals.items():
        with pytest.raises(BackupRefused) as refused:
            back_up(source, destination)
        said[name] = str(refused.value)
    assert said["missing"].startswith(f"no database at {tmp_path}/typo.db")
    assert not (tmp_path / "typo.db").exists()  # not made empty by looking at it
    assert said["taken"] == f"{tmp_path / 'taken.db'} exists already: name a new file"
    assert (tmp_path / "taken.db").read_bytes() == b"an older backup"
    assert said["no folder"].startswith("no folder")
    assert "pg_dump -Fc" in said["postgresql"] and "hunter2" not in said["postgresql"]


@pytest.mark.e2e
def test_the_command_says_one_line_and_exits_1_when_refused(tmp_path: Path) -> None:
    url = database(tmp_path / "parley.db")
    env = {"PYTHONPATH": str(ROOT), "DATABASE_URL": url}

    def parley(*args: str) -> subprocess.CompletedProcess[str]:
        return run_parley("backup", *args, env=env, timeout=120)

    made = parley(str(tmp_path / "copy.db"))
    assert made.returncode == 0 and made.stdout.startswith("backed up "), made
    again = parley(str(tmp_path / "copy.db"))
    assert again.returncode == 1
    assert again.stderr == f"parley: {tmp_path / 'copy.db'} exists already: name a new file\n"
