"""A small pool of helper processes for tools that may hold the GIL (`isolation="process"`).

Long computations inside C code (a huge `pow`, a regular expression that backtracks) keep
the GIL, so a thread does not protect the event loop from them; another process does, and
unlike a thread it can be killed. A helper is a plain `python -m bot.tools.process_main`
child speaking length-prefixed pickles on its stdin and stdout. Its pipes are non-blocking
and waited on with the loop's `add_reader`/`add_writer`, so waiting never blocks the loop,
and nothing of a helper is bound to one loop (tests run many). Helpers are reused while they
behave; one that overruns its deadline is killed, and a fresh one is started when needed. At
most `limit` exist at once; a call that finds them all busy waits, until its deadline.
A helper exits by itself when its stdin closes, so a worker that dies leaves none behind.
A helper imports its tools' modules as it starts, which takes a good part of a second, so a
worker starts one ahead (`warm`) rather than on the first call, and again after a kill.
`concurrent.futures.ProcessPoolExecutor` is not used because it cannot stop one call: a task
that overruns can only be abandoned with its process still busy, or the whole pool torn down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import IO, Any

from bot.tools.base import Tool, ToolContext, ToolError, ToolResult
from bot.tools.process_main import HEADER

log = logging.getLogger(__name__)


class Helper:
    """One helper process, doing one call at a time."""

    def __init__(self, modules: Sequence[str]) -> None:
        paths = [path or os.getcwd() for path in sys.path]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        command = [sys.executable, "-m", "bot.tools.process_main", *modules]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
        )
        self._stdin: IO[bytes] = _pipe(self.process.stdin)
        self._stdout: IO[bytes] = _pipe(self.process.stdout)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    async def call(self, tool: Tool, ctx: ToolContext, values: Mapping[str, Any]) -> Any:
        """(True, result) or (False, exception) from the helper; EOFError if it died."""
        function = tool.function
        return await self.send((function.__module__, function.__qualname__, ctx, dict(values)))

    async def send(self, message: Any) -> Any:
        job = pickle.dumps(message)
        try:
            await _write(self._stdin.fileno(), HEADER.pack(len(job)) + job)
            (size,) = HEADER.unpack(await _read(self._stdout.fileno(), HEADER.size))
            return pickle.loads(await _read(self._stdout.fileno(), size))
        except (BrokenPipeError, ConnectionResetError):
            raise EOFError("the tool's process ended") from None

    def kill(self) -> None:
        """Kill it (it ends at once)."""
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.stop()

    def stop(self) -> None:
        """Let it end: closing its stdin ends its loop. A thread reaps it."""
        for pipe in (self._stdin, self._stdout):
            with contextlib.suppress(OSError):
                pipe.close()
        threading.Thread(target=self.process.wait, daemon=True).start()


def _pipe(stream: IO[bytes] | None) -> IO[bytes]:
    assert stream is not None  # Popen was asked for it
    os.set_blocking(stream.fileno(), False)
    return stream


async def _ready(fd: int, *, write: bool) -> None:
    loop = asyncio.get_running_loop()
    ready = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    (loop.add_writer if write else loop.add_reader)(fd, wake)
    try:
        await ready
    finally:
        (loop.remove_writer if write else loop.remove_reader)(fd)


async def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            await _ready(fd, write=True)


async def _read(fd: int, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        try:
            chunk = os.read(fd, size - len(data))
        except BlockingIOError:
            await _ready(fd, write=False)
            continue
        if not chunk:
            raise EOFError("the tool's process ended")
        data += chunk
    return bytes(data)


class ProcessPool:
    def __init__(self, limit: int, modules: Sequence[str] = ()) -> None:
        self.limit = limit
        self.modules = list(modules)
        self._idle: list[Helper] = []
        self._count = 0  # idle and busy
        self._closed = False
        self._warming: set[asyncio.Task[None]] = set()
        self._starting = 0  # helpers being warmed: a call waits for one, not starts its own

    @property
    def idle(self) -> list[int]:
        """The process ids of the idle helpers (for operators and tests)."""
        return [helper.process.pid for helper in self._idle]

    async def run(
        self, tool: Tool, ctx: ToolContext, values: Mapping[str, Any], deadline: float
    ) -> str | ToolResult:
        helper = await self._take(tool.name, deadline)
        healthy = False
        try:
            async with asyncio.timeout_at(deadline):
                ok, value = await helper.call(tool, ctx, values)
            healthy = True
        except EOFError:
            raise ToolError(f"{tool.name} failed: its process ended unexpectedly") from None
        finally:
            self._give_back(helper, healthy)
        if not ok:
            raise value
        return value if isinstance(value, ToolResult) else str(value)

    async def _take(self, name: str, deadline: float) -> Helper:
        loop = asyncio.get_running_loop()
        while True:
            while self._idle:
                helper = self._idle.pop()
                if helper.alive:
                    return helper
                self._give_back(helper, healthy=False, replace=False)
            if self._count < self.limit and not self._starting:
                self._count += 1
                try:
                    return Helper(self.modules)
                except BaseException:
                    self._count -= 1
                    raise
            if loop.time() >= deadline:
                raise ToolError(
                    f"{name} not run: all {self.limit} tool processes of this worker are "
                    "busy; try again later."
                )
            await asyncio.sleep(min(0.02, max(0.0, deadline - loop.time())))

    async def warm(self) -> None:
        """Have one helper ready, its modules imported, unless one exists. A call made
        meanwhile waits for it: the helper is already importing, where a second one started
        cold would take as long again, and on two cores longer."""
        if self._count:
            return
        self._count += 1
        self._starting += 1
        healthy = False
        try:
            helper = Helper(self.modules)
        except BaseException:
            self._count -= 1
            self._starting -= 1
            raise
        try:
            await helper.send(None)  # answered once its imports are done
            healthy = True
        finally:
            self._starting -= 1
            self._give_back(helper, healthy, replace=False)  # a helper that cannot start
            # is not started again and again; the next call tries once more

    def _give_back(self, helper: Helper, healthy: bool, *, replace: bool = True) -> None:
        if healthy and not self._closed:
            self._idle.append(helper)
            return
        self._count -= 1
        helper.kill()
        if replace and not self._closed:
            task = asyncio.get_running_loop().create_task(self._rewarm())
            self._warming.add(task)
            task.add_done_callback(self._warming.discard)

    async def _rewarm(self) -> None:
        """A killed helper's replacement, started now rather than by the next call."""
        try:
            await self.warm()
        except Exception:
            log.warning("could not start a helper process for tools", exc_info=True)

    async def aclose(self) -> None:
        """Let the idle helpers end (busy ones are killed as their calls end)."""
        self._closed = True
        for task in list(self._warming):
            task.cancel()
        idle, self._idle = self._idle, []
        self._count -= len(idle)
        for helper in idle:
            helper.stop()
