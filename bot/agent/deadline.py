"""A turn's wall clock (PARLEY_TURN_TIMEOUT): past it, the turn stops the way a `/stop` stops
it, keeping what it has, and says why.

It runs while the agent works, from the start of a run to its end: a turn that waits for a
person's approval has ended its run, and the run that resumes it starts a clock of its own,
since the time a person takes to decide is not the agent's.
"""

from __future__ import annotations

import asyncio

from bot.people.limits import duration

TOOL_NOTE = "Stopped: the turn ran out of time before it finished."


class Deadline:
    def __init__(self, seconds: float, cancel: asyncio.Event) -> None:
        self.seconds = seconds
        self.cancel = cancel
        self.passed = False
        self._timer: asyncio.TimerHandle | None = None

    def start(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(self.seconds, self._expire)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _expire(self) -> None:
        if not self.cancel.is_set():  # a /stop that came first keeps its own ending
            self.passed = True
            self.cancel.set()

    def notice(self) -> str:
        return (
            f"I stopped here: a reply may take {duration(self.seconds)} at most, and this one "
            "ran out of time. Ask me to go on, or for something smaller."
        )
