"""The shared directories' marks on a real Redis: a directory deleted and made again under a
process that had matched it takes its mark back; one that process never matched does not."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bot.config.settings import Settings
from bot.files import shared_dirs


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    (tmp_path / "files").mkdir()
    (tmp_path / "workspaces").mkdir()
    yield Settings(
        files_dir=tmp_path / "files",
        workspace_dir=tmp_path / "workspaces",
        database_url="postgresql+asyncpg://parley@localhost/parley",  # no folder of its own
    )
    shared_dirs._MATCHED.clear()  # one test's process is not the next one's


async def test_a_directory_made_again_under_a_process_takes_its_mark_back(
    redis_client: Redis, settings: Settings
) -> None:
    assert await shared_dirs.check(redis_client, settings) is None
    before = (settings.files_dir / shared_dirs.MARK).read_text()
    shutil.rmtree(settings.files_dir)
    settings.files_dir.mkdir()  # a data folder wiped, then restored empty
    assert await shared_dirs.check(redis_client, settings) is None
    assert (settings.files_dir / shared_dirs.MARK).read_text() == before


async def test_a_process_that_never_matched_a_directory_gives_it_a_mark_of_its_own(
    redis_client: Redis, settings: Settings
) -> None:
    assert await shared_dirs.check(redis_client, settings) is None
    shared_dirs._MATCHED.clear()  # another host's process, started now
    shutil.rmtree(settings.files_dir)
    settings.files_dir.mkdir()  # its own empty directory, not the shared one
    problem = await shared_dirs.check(redis_client, settings)
    assert problem is not None and problem.startswith("PARLEY_FILES_DIR (")
    assert "PARLEY_WORKSPACE_DIR" not in problem
