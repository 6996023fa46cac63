"""A reader process started ahead of the file it will read, so a person's photo does not wait
for an interpreter to start and its libraries to load (a tenth of a second or more).

Each reader still reads one message and ends (`bot.files.reader`): a spare is only started
early. Once one is taken, the next is started behind it, and a file that comes while it
starts waits for it rather than start another; one left unused for `IDLE` seconds is let
go, so a process at rest keeps no reader. A spare starts with the image library loaded
(`--ahead`: photos are most of what comes) and takes its limits when its job comes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from bot.files import children

IDLE = 60.0  # seconds a spare waits for a file before it is let go

Start = Callable[[], Awaitable[asyncio.subprocess.Process]]


class Spare:
    def __init__(self, start: Start, cold: Start, idle: float = IDLE) -> None:
        """`start` starts a spare (its libraries loaded ahead); `cold`, a reader needed now,
        which loads only what its file needs."""
        self._start = start
        self._cold = cold
        self._idle = idle
        self._ready: asyncio.subprocess.Process | None = None
        self._starting: asyncio.Task[None] | None = None
        self._let_go: asyncio.TimerHandle | None = None
        self._ending: set[asyncio.Task[None]] = set()

    async def take(self) -> asyncio.subprocess.Process:
        """The spare if one is ready (else a reader started now); the next one is started."""
        if self._ready is None and self._starting is not None:
            with contextlib.suppress(OSError):  # sooner than a reader started from nothing
                await asyncio.shield(self._starting)
        ready, self._ready = self._ready, None
        if self._starting is None:
            self._starting = asyncio.create_task(self._start_next())
        if ready is not None and ready.returncode is None:
            return ready
        return await self._cold()

    async def _start_next(self) -> None:
        try:
            process = await self._start()
            if self._ready is not None:  # raced by another start: one is enough
                await _ended(process)
                return
            self._ready = process
            if self._let_go is not None:
                self._let_go.cancel()
            self._let_go = asyncio.get_running_loop().call_later(self._idle, self._expire)
        finally:
            self._starting = None

    def _expire(self) -> None:
        ready, self._ready = self._ready, None
        if ready is not None:
            ending = asyncio.create_task(_ended(ready))
            self._ending.add(ending)
            ending.add_done_callback(self._ending.discard)

    async def aclose(self) -> None:
        """End the spare and any being started."""
        if self._let_go is not None:
            self._let_go.cancel()
        if self._starting is not None:
            with contextlib.suppress(Exception):
                await self._starting
        ready, self._ready = self._ready, None
        if ready is not None:
            await _ended(ready)
        for ending in list(self._ending):
            await ending


async def _ended(process: asyncio.subprocess.Process) -> None:
    children.kill(process)
    await process.wait()
