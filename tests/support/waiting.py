"""Waiting for something to happen: the one way the tests poll.

`until(check, what)` asks `check` (a plain function or a coroutine function) again and again,
a short interval apart, until it answers with something true, and says how long that took.
When the deadline passes first it fails with an AssertionError naming what was awaited and the
deadline. The default deadline is generous: the tests share a busy machine of two cores, where
starting a Python process alone can take seconds, and a deadline only matters when something is
broken. A test that holds Parley to a bound (a lease taken over within so many seconds) waits
with the default and asserts on the seconds `until` returns, so the bound is the test's own.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable

WITHIN = 60.0  # seconds: a minute, for what takes well under a second on an idle machine
EVERY = 0.05  # seconds between two checks

Check = Callable[[], object | Awaitable[object]]


async def until(
    check: Check,
    what: str | Callable[[], str],
    within: float = WITHIN,
    every: float = EVERY,
) -> float:
    """Seconds until `check()` (sync or async) is true; after `within` seconds, an
    AssertionError naming `what` (a text, or a function giving one, for details such as a
    process's log that are only worth reading on a failure) and the deadline."""
    started = time.monotonic()
    while True:
        outcome = check()
        if inspect.isawaitable(outcome):
            outcome = await outcome
        waited = time.monotonic() - started
        if outcome:
            return waited
        if waited > within:
            said = what if isinstance(what, str) else what()
            raise AssertionError(f"not within {within:g} s: {said}")
        await asyncio.sleep(every)
