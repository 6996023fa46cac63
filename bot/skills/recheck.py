"""Looking at the operator's files again while a process runs, at most every few seconds:
the skills' folders (`bot.skills.library`) and the persona's files (`bot.agent.prompt`).

Before a turn, `due` runs a look (a blocking function: a `stat` of each file, and a read only
when one changed) in a thread, unless one ran less than `interval` seconds ago; one look at a
time, however many turns start together. A look that fails is logged and the turn goes on
with what was read before: a turn is worth more than a fresh look at the files.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable

log = logging.getLogger(__name__)
CHECK_EVERY = 2.0  # seconds between two looks


class Recheck:
    def __init__(
        self, what: str, interval: float = CHECK_EVERY, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.what = what  # for the log: "the skills", "the bootstrap files"
        self.interval = interval
        self.clock = clock
        self._checked = -math.inf
        self._lock = asyncio.Lock()

    def never(self) -> None:
        """No look from now on (what there is was given, not read)."""
        self._checked = math.inf

    async def due(self, look: Callable[[], object]) -> None:
        """Run `look` in a thread unless one ran in the last `interval` seconds."""
        if self.clock() - self._checked < self.interval:
            return
        async with self._lock:
            if self.clock() - self._checked >= self.interval:
                try:
                    await asyncio.to_thread(look)
                except Exception:
                    log.warning("could not read %s again", self.what, exc_info=True)
                self._checked = self.clock()
