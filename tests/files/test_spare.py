"""A reader started ahead of its file: taken at once, the next started behind it, let go when
unused for its idle time, ended by `aclose`; and readers kept ahead read files like any."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.files.reading import Arrived, Readers, ReadLimits
from bot.files.spare import Spare
from tests.support.images import image_bytes
from tests.support.waiting import until


async def test_a_spare_is_taken_replaced_and_let_go_when_idle() -> None:
    started: list[asyncio.subprocess.Process] = []

    async def start() -> asyncio.subprocess.Process:
        process = await asyncio.create_subprocess_exec(
            "sleep", "30", stdin=asyncio.subprocess.PIPE, start_new_session=True
        )
        started.append(process)
        return process

    spare = Spare(start, start, idle=0.5, count=1)
    first = await spare.take()  # none ready: started now, and the next behind it
    await until(lambda: len(started) == 2, lambda: f"{len(started)} started", 10)
    await until(lambda: spare._ready is not None, lambda: "no spare ready", 10)
    second = await spare.take()
    assert second is started[1] and first is started[0]
    await until(lambda: len(started) == 3, lambda: f"{len(started)} started", 10)
    await until(lambda: started[2].returncode is not None, lambda: "the idle spare lives", 10)
    for process in (first, second):
        process.kill()
        await process.wait()
    await spare.aclose()
    assert all(process.returncode is not None for process in started)


async def test_readers_kept_ahead_read_every_file_and_close(tmp_path: Path) -> None:
    readers = Readers(tmp_path, ReadLimits(), ahead=True)
    try:
        for side in (40, 50, 60):
            [stored] = await readers.read(
                "ann", [Arrived(image_bytes((side, 30)), "a.png")], "people"
            )
            assert stored.media_type == "image/png"
    finally:
        await readers.aclose()
    assert readers._spare is not None and readers._spare._ready == []
