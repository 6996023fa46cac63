"""A turn's wall clock (PARLEY_TURN_TIMEOUT): past it, the turn stops the way a `/stop` stops
it, keeping what it has, and says why.

It runs while the agent works, from the start of a run to its end: a turn that waits for a
person's approval has ended its run, and the run that resumes it starts a clock of its own,
since the time a person takes to decide is not the agent's. For the same reason it stands
still while the run waits, within a tool call, for a person to decide on a helper's call
(`held`): the turn runs on, but the time is the person's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator

from bot.people.limits import duration

TOOL_NOTE = "Stopped: the turn ran out of time before it finished."


class Deadline:
    def __init__(self, seconds: float, cancel: asyncio.Event) -> None:
        self.seconds = seconds
        self.cancel = cancel
        self.passed = False
        self._timer: asyncio.TimerHandle | None = None
        self._left = seconds  # what is left while the clock does not run
        self._holds = 0
        self._started = False
        self._stopped = False

    @property
    def left(self) -> float:
        """Seconds until the clock stops the turn (all of them before it starts)."""
        if self._timer is None:
            return self._left
        return self._timer.when() - asyncio.get_running_loop().time()

    def start(self) -> None:
        self._started = True
        self._run()

    def stop(self) -> None:
        self._stopped = True
        self._pause()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """The clock stands still inside (held by several at once, until the last lets go)."""
        self._holds += 1
        self._pause()
        try:
            yield
        finally:
            self._holds -= 1
            self._run()

    def _run(self) -> None:
        if self._started and not self._stopped and not self._holds and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self._left, self._expire)

    def _pause(self) -> None:
        if self._timer is not None:
            self._left = self.left
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        if not self.cancel.is_set():  # a /stop that came first keeps its own ending
            self.passed = True
            self.cancel.set()

    def notice(self) -> str:
        return (
            f"I stopped here: a reply may take {duration(self.seconds)} at most, and this one "
            "ran out of time. Ask me to go on, or for something smaller."
        )
