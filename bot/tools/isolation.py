"""Where a tool call runs, so that no tool can stall the worker's event loop.

One event loop serves every session of a worker process: their turns, their lease heartbeats
and the tool timeouts themselves. A tool body that blocks that loop (a sync HTTP call, a
`time.sleep` in an async tool, a long computation) stops all of them, and a timeout enforced
with `asyncio.timeout` cannot fire while it does. So only tools that declare themselves
cooperative (`isolation="loop"`) run on the loop; the others run in a thread of their own or
in a helper process, and the timeout is enforced from outside: the awaiting side stops
waiting at the deadline, whatever the tool is doing.

A thread cannot be killed. One that overruns is asked to stop (its async tool is cancelled
on its own loop) and otherwise abandoned, but it keeps its slot until it really ends, so a
tool that hangs forever costs one of `threads` slots, not an ever-growing number of threads.
Threads are daemons: a stuck one never keeps the worker from exiting.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from bot.tools.base import Tool, ToolContext, ToolError, ToolResult
from bot.tools.processes import ProcessPool

log = logging.getLogger(__name__)
POLL = 0.02  # how often a call waiting for a free slot looks again


def busy(name: str, limit: int, kind: str) -> ToolError:
    return ToolError(
        f"{name} not run: all {limit} tool {kind} of this worker are busy (calls that timed "
        "out may still hold some); try again later."
    )


class ToolRunner:
    """Runs one call where its tool's `isolation` says, done by `deadline` (the loop's time),
    waiting for a free slot included. Raises TimeoutError when the time is up, ToolError when
    no slot came free in time, and whatever the tool raised."""

    def __init__(self, *, threads: int, processes: int, modules: Sequence[str] = ()) -> None:
        self.threads = ThreadSlots(threads)
        self.processes = ProcessPool(processes, modules)

    async def run(
        self, tool: Tool, ctx: ToolContext, arguments: BaseModel, deadline: float
    ) -> str | ToolResult:
        if tool.isolation == "loop":
            async with asyncio.timeout_at(deadline):
                return await tool(ctx, arguments)
        if tool.isolation == "process":  # the context pickles as it is
            return await self.processes.run(tool, ctx, dict(arguments), deadline)
        return await self.threads.run(tool, ctx, arguments, deadline)

    async def aclose(self) -> None:
        await self.processes.aclose()


class ThreadSlots:
    """At most `limit` tool threads alive at once, counting abandoned ones."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._alive = 0

    @property
    def alive(self) -> int:
        """Tool threads still running, including abandoned ones."""
        return self._alive

    async def run(
        self, tool: Tool, ctx: ToolContext, arguments: BaseModel, deadline: float
    ) -> str | ToolResult:
        try:
            async with asyncio.timeout_at(deadline):
                await wait_for_slot(self._take)
        except TimeoutError:
            raise busy(tool.name, self.limit, "threads") from None
        call = ThreadCall(tool, ctx, arguments, done=self._give_back)
        threading.Thread(target=call.main, name=f"tool-{tool.name}", daemon=True).start()
        try:
            async with asyncio.timeout_at(deadline):
                return await asyncio.wrap_future(call.result)
        finally:
            if not call.result.done():
                call.stop()
                log.warning(
                    "gave up waiting for tool %s (timeout or cancel): its thread is asked to "
                    "stop, or left to end on its own (%d of %d tool threads alive)",
                    tool.name,
                    self._alive,
                    self.limit,
                )

    def _take(self) -> bool:
        with self._lock:
            if self._alive >= self.limit:
                return False
            self._alive += 1
            return True

    def _give_back(self) -> None:
        with self._lock:
            self._alive -= 1


async def wait_for_slot(take: Callable[[], Any]) -> Any:
    """Poll `take` until it gives something truthy. Slots come free from other threads and
    other loops, which an asyncio primitive cannot hear; this only runs while all are busy."""
    while not (got := take()):  # noqa: ASYNC110 (no Event can be set from those threads)
        await asyncio.sleep(POLL)
    return got


class ThreadCall:
    """One tool call on an event loop of its own, in the thread that runs `main`."""

    def __init__(
        self, tool: Tool, ctx: ToolContext, arguments: BaseModel, done: Callable[[], None]
    ) -> None:
        self.tool, self.ctx, self.arguments, self._done = tool, ctx, arguments, done
        self.result: concurrent.futures.Future[str | ToolResult] = concurrent.futures.Future()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[str | ToolResult] | None = None
        self._stopped = False

    def main(self) -> None:
        try:
            if self.result.set_running_or_notify_cancel():
                with asyncio.Runner() as runner:
                    self.result.set_result(runner.run(self._body()))
        except BaseException as exc:  # the caller reads it; nothing may escape a thread
            if not self.result.done():
                self.result.set_exception(exc)
        finally:
            self._done()

    async def _body(self) -> str | ToolResult:
        with self._lock:
            if self._stopped:
                raise asyncio.CancelledError
            self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
        return await self.tool(self.ctx, self.arguments)

    def stop(self) -> None:
        """Cancel the tool on its loop; a body that blocks that loop will not notice."""
        with self._lock:
            self._stopped = True
            if self._loop is not None and self._task is not None:
                with contextlib.suppress(RuntimeError):  # its loop closed: the call ended
                    self._loop.call_soon_threadsafe(self._task.cancel)
