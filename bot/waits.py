"""Waiting for an event with a bound, without losing a cancellation.

Python 3.11's `asyncio.wait_for` returns the inner result when the waiting task is cancelled
in the same round as the awaited event is set, and the cancellation is gone: a loop that
waits this way in a burst of events (Telegram's polling as updates are handled) may never
stop. `asyncio.timeout` keeps it, so every bounded wait on an event in a loop goes through
here.
"""

from __future__ import annotations

import asyncio
import contextlib


async def set_within(event: asyncio.Event, seconds: float) -> bool:
    """Wait up to `seconds` for `event`; whether it is set."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()
    return event.is_set()
