"""Running the doctor's checks side by side, each within its own deadline.

A host that never answers (a firewalled Redis, a Bot API server behind a dead proxy) must
not hang the command: each check is bounded, and one that runs out of time, or crashes,
becomes a failed line of its own while the others report as usual. What a check imports
(a platform's SDK, the MCP SDK: seconds of CPU on a busy machine, which an import on the
event loop would take from every other check's deadline) is imported first, before any
deadline runs (`Check.load`). Work that blocks (the
sandbox's probe, importing the operator's tool modules) runs in a daemon thread, so a stuck
one cannot keep the command from exiting either.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from worker.doctor.report import Finding, failed

T = TypeVar("T")
Run = Callable[[], Awaitable[list[Finding]]]


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class Check:
    """One check: its name, what it runs, what to do when it gets no answer in time, and
    what it imports (`load`), done before the deadlines start."""

    name: str
    run: Run
    stuck: str
    load: Callable[[], None] = _nothing


async def run_all(checks: Sequence[Check], within: float) -> list[Finding]:
    """Every check's findings, in the order of `checks`."""
    for check in checks:
        with contextlib.suppress(Exception):  # the check meets the same error, and says it
            check.load()
    found = await asyncio.gather(*(_bounded(check, within) for check in checks))
    return [finding for findings in found for finding in findings]


async def _bounded(check: Check, within: float) -> list[Finding]:
    try:
        return await asyncio.wait_for(check.run(), within)
    except TimeoutError:
        return [failed(check.name, f"no answer within {within:g} s", check.stuck)]
    except Exception as exc:
        said = str(exc).splitlines()[0][:200] if str(exc) else ""
        found = f"the check failed: {type(exc).__name__}" + (f" ({said})" if said else "")
        return [failed(check.name, found, check.stuck)]


async def in_thread(work: Callable[[], T]) -> T:
    """`work()` in a daemon thread of its own: awaiting it can be cancelled, and a thread
    that never returns does not keep the process from exiting (as the event loop's default
    executor would, which waits for its threads when the loop closes)."""
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def target() -> None:
        if not future.set_running_or_notify_cancel():
            return  # the caller stopped waiting before the thread started
        try:
            future.set_result(work())
        except BaseException as exc:  # handed to the awaiting side
            future.set_exception(exc)

    threading.Thread(target=target, name="doctor", daemon=True).start()
    return await asyncio.wrap_future(future)
