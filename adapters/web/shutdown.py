"""Stopping `parley web` within a bounded time: one deadline that every part shares.

On SIGTERM the process stops listening, then each platform stops taking work and finishes
what it took (Telegram's long polling, Slack's Socket Mode: their `on_shutdown` handlers),
then the requests still in flight (webhooks, Slack's HTTP events) are waited for, then
everything is closed. Each step may take only what is left of PARLEY_SHUTDOWN_GRACE, so the
whole stop fits in it, whatever each step finds; what a step could not finish in time was
not confirmed to its platform, which delivers it again to the next process.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable

from aiohttp import web


class Deadline:
    """When the web process must be done stopping, set as the stop begins (`Runner.stop`).
    An app cleaned up without it (as tests do) waits on no platform: what one holds is
    cancelled, not confirmed, and so delivered again."""

    def __init__(self) -> None:
        self._at = math.inf

    def start(self, grace: float) -> None:
        self._at = asyncio.get_running_loop().time() + grace

    @property
    def started(self) -> bool:
        return self._at != math.inf

    def left(self) -> float:
        """Seconds until the deadline; none if the stop did not start with one (the app
        cleaned up without `Runner.stop`, as a test's app is: nothing is waited for)."""
        if not self.started:
            return 0.0
        return max(0.0, self._at - asyncio.get_running_loop().time())

    async def within(self, step: Awaitable[object]) -> bool:
        """Wait for `step` until the deadline; whether it finished (it is cancelled if not)."""
        try:
            await asyncio.wait_for(step, self.left())
        except TimeoutError:
            return False
        return True


DEADLINE = web.AppKey("shutdown_deadline", Deadline)
