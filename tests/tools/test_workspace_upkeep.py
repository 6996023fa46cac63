"""Workspaces are emptied as the record is: a deleted session's whole workspace goes, and
retention removes every file older than its window, from every workspace, links unfollowed."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.tools.base import ToolContext
from bot.tools.workspace_upkeep import TRASH_PREFIX, prune_workspaces, remove_workspace
from tests.tools.workspace_support import (
    OTHER,
    SESSION,
    call,
    context,
    home,
    read_file,
    write_file,
)

LONG_AGO = time.time() - 40 * 86_400
WINDOW = timedelta(days=30)
DEADLINE_S = 60.0


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return tmp_path / "workspaces"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file next to the workspaces that links inside them point to; it must stay."""
    secret = tmp_path / "outside.txt"
    secret.write_text("not a workspace's")
    os.utime(secret, (LONG_AGO, LONG_AGO))
    return secret


def write(ctx: ToolContext, path: str, *, old: bool = False) -> Path:
    """A file written as the model writes one; `old` dates it before the window."""
    call(write_file, ctx, path=path, content=path)
    where = home(ctx) / path
    if old:
        os.utime(where, (LONG_AGO, LONG_AGO))
    return where


def files_in(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_deleted_sessions_workspace_goes_whole_and_only_it(base: Path, outside: Path) -> None:
    mine, theirs = context(base, SESSION), context(base, OTHER)
    write(mine, "notes/todo.md")
    write(mine, "deep/er/data.csv", old=True)
    (home(mine) / "deep" / "link").symlink_to(outside)
    (home(mine) / "up").symlink_to(outside.parent, target_is_directory=True)
    write(theirs, "kept.txt")
    assert remove_workspace(base, SESSION)
    assert not home(mine).exists() and not os.path.lexists(home(mine))
    assert [p.name for p in base.iterdir()] == [home(theirs).name]
    assert (home(theirs) / "kept.txt").read_text() == "kept.txt"
    assert outside.read_text() == "not a workspace's"  # the links went, not their targets
    assert not remove_workspace(base, SESSION)  # nothing left to remove
    assert not remove_workspace(base / "never-made", SESSION)


def test_retention_removes_old_files_from_every_workspace(base: Path, outside: Path) -> None:
    mine, theirs = context(base, SESSION), context(base, OTHER)
    write(mine, "notes/recent.md")
    write(mine, "notes/old.md", old=True)
    write(mine, "archive/2020/old.csv", old=True)
    old_link = home(mine) / "notes" / "link"
    old_link.symlink_to(outside)
    os.utime(old_link, (LONG_AGO, LONG_AGO), follow_symlinks=False)
    write(theirs, "only-old.txt", old=True)
    removed = prune_workspaces(base, datetime.now(UTC) - WINDOW)
    assert removed == 4
    assert files_in(home(mine)) == ["notes", "notes/recent.md"]  # emptied folders went too
    assert not home(theirs).exists()  # a workspace left empty goes whole
    assert outside.read_text() == "not a workspace's"
    assert call(read_file, mine, path="notes/recent.md") == "notes/recent.md"
    assert prune_workspaces(base, datetime.now(UTC) - WINDOW) == 0


def test_retention_leaves_what_is_not_a_workspace_and_ends_cut_short_removals(
    base: Path,
) -> None:
    base.mkdir()
    foreign = base / "lost+found"  # a volume's own folder: no session is named so
    foreign.mkdir()
    (foreign / "kept").write_text("x")
    os.utime(foreign / "kept", (LONG_AGO, LONG_AGO))
    left = base / f"{TRASH_PREFIX}0123456789abcdef"  # a removal that was cut short
    (left / "inner").mkdir(parents=True)
    (left / "inner" / "recent.txt").write_text("x")
    prune_workspaces(base, datetime.now(UTC) - WINDOW)
    assert sorted(p.name for p in base.iterdir()) == ["lost+found"]
    assert (foreign / "kept").exists()


def test_a_missing_workspaces_folder_is_nothing_to_prune(base: Path) -> None:
    assert prune_workspaces(base, datetime.now(UTC)) == 0


@pytest.fixture
def held(base: Path) -> Iterator[int]:
    """The session's workspace, emptied and held under its write lock as retention holds it."""
    ctx = context(base)
    write(ctx, "gone.txt")
    (home(ctx) / "gone.txt").unlink()
    fd = os.open(home(ctx), os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield fd
    finally:
        os.close(fd)


def waiting_for(fd: int) -> bool:
    """Whether some process waits for the flock held on `fd` (a `->` line of /proc/locks)."""
    inode = f":{os.fstat(fd).st_ino} "
    with open("/proc/locks") as locks:
        return any("->" in line and inode in line for line in locks)


def test_a_write_that_waited_while_its_empty_workspace_was_removed_is_kept(
    base: Path, held: int
) -> None:
    ctx = context(base)
    answers: list[str] = []
    writer = threading.Thread(
        target=lambda: answers.append(call(write_file, ctx, path="new.txt", content="kept"))
    )
    writer.start()
    deadline = time.monotonic() + DEADLINE_S
    while not waiting_for(held):
        assert time.monotonic() < deadline, "the write never waited for the lock"
        time.sleep(0.01)
    os.rmdir(home(ctx))  # what retention does to a workspace it left empty, lock held
    fcntl.flock(held, fcntl.LOCK_UN)
    writer.join(DEADLINE_S)
    assert answers and answers[0].startswith("Wrote new.txt")
    assert (home(ctx) / "new.txt").read_text() == "kept"
