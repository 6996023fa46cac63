"""A reader process started ahead of the file it will read, so a person's photo does not wait
for an interpreter to start and its libraries to load (a tenth of a second or more).

Each reader still reads one message and ends (`bot.files.reader`): a spare is only started
early. `COUNT` are kept; once one is taken, another is started behind it, and a file that
comes while none is ready waits for the one starting rather than start another; spares left
unused for `IDLE` seconds are let go, so a process at rest keeps no reader. A spare starts
with the image library loaded (`--ahead`: photos are most of what comes) and takes its
limits when its job comes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from bot.files import children

IDLE = 60.0  # seconds spares wait for a file before they are let go
COUNT = 2  # spares kept: files that come closer together than one starts find one ready

Start = Callable[[], Awaitable[asyncio.subprocess.Process]]


class Spare:
    def __init__(self, start: Start, cold: Start, idle: float = IDLE, count: int = COUNT) -> None:
        """`start` starts a spare (its libraries loaded ahead); `cold`, a reader needed now,
        which loads only what its file needs; `count` spares are kept."""
        self._start = start
        self._cold = cold
        self._idle = idle
        self._count = count
        self._ready: list[asyncio.subprocess.Process] = []
        self._starting: asyncio.Task[None] | None = None
        self._let_go: asyncio.TimerHandle | None = None
        self._ending: set[asyncio.Task[None]] = set()

    async def take(self) -> asyncio.subprocess.Process:
        """A spare if one is ready (else a reader started now); another is started."""
        if not self._ready and self._starting is not None:
            with contextlib.suppress(OSError):  # sooner than a reader started from nothing
                await asyncio.shield(self._starting)
        ready = self._ready.pop(0) if self._ready else None
        if self._starting is None:
            self._starting = asyncio.create_task(self._fill())
        if ready is not None and ready.returncode is None:
            return ready
        return await self._cold()

    async def _fill(self) -> None:
        try:
            while len(self._ready) < self._count:
                self._ready.append(await self._start())
            if self._let_go is not None:
                self._let_go.cancel()
            self._let_go = asyncio.get_running_loop().call_later(self._idle, self._expire)
        finally:
            self._starting = None

    def _expire(self) -> None:
        ready, self._ready = self._ready, []
        for process in ready:
            ending = asyncio.create_task(_ended(process))
            self._ending.add(ending)
            ending.add_done_callback(self._ending.discard)

    async def aclose(self) -> None:
        """End the spares and any being started."""
        if self._let_go is not None:
            self._let_go.cancel()
        if self._starting is not None:
            with contextlib.suppress(Exception):
                await self._starting
        ready, self._ready = self._ready, []
        for process in ready:
            await _ended(process)
        for ending in list(self._ending):
            await ending


async def _ended(process: asyncio.subprocess.Process) -> None:
    children.kill(process)
    await process.wait()
