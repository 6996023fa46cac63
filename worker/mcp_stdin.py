"""stdin for `parley mcp` over stdio, read on the event loop rather than in a thread.

The SDK reads stdin in a worker thread, and a thread blocked in `read()` can be neither
cancelled nor left behind: on SIGTERM, with the client still holding the pipe open, the
process would wait for a next line that never comes. A pipe read through the loop stops at
once. Anything that is not a pipe, socket or terminal (a file, /dev/null) cannot be watched
by the loop; it never blocks for long either, so the SDK's own reader is left to it.

A line longer than `MAX_MESSAGE` is dropped with a warning, so that one client cannot make
the server hold an unbounded line in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator

import anyio

log = logging.getLogger(__name__)
MAX_MESSAGE = 4 * 1024 * 1024  # bytes of one JSON-RPC message, as over HTTP


class PipeLines(anyio.AsyncFile[str]):
    """The lines of stdin, as the SDK's stdio transport iterates them."""

    def __init__(self, reader: asyncio.StreamReader, limit: int) -> None:
        super().__init__(sys.stdin)
        self._reader = reader
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as exc:  # the end, maybe without a newline
                if exc.partial.strip():
                    yield exc.partial.decode("utf-8", errors="replace")
                return
            except asyncio.LimitOverrunError as exc:
                log.warning("dropped a message longer than %d bytes from stdin", self._limit)
                if not await self._skip_line(exc.consumed):
                    return
                continue
            yield line.decode("utf-8", errors="replace")

    async def _skip_line(self, consumed: int) -> bool:
        """Read past the rest of an overlong line; False at the end of stdin."""
        while True:
            try:
                await self._reader.readexactly(consumed)
                await self._reader.readuntil(b"\n")
                return True
            except asyncio.IncompleteReadError:
                return False
            except asyncio.LimitOverrunError as exc:
                consumed = exc.consumed


@contextlib.asynccontextmanager
async def pipe_stdin(limit: int = MAX_MESSAGE) -> AsyncIterator[PipeLines | None]:
    """stdin read on the loop, or None where the loop cannot watch it."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    stream = os.fdopen(os.dup(0), "rb", buffering=0)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), stream
        )
    except (ValueError, OSError):  # a file or /dev/null: epoll refuses them
        stream.close()
        yield None
        return
    try:
        yield PipeLines(reader, limit)
    finally:
        transport.close()
        with contextlib.suppress(OSError):
            os.set_blocking(0, True)  # the loop made it non-blocking; a shell expects it not
