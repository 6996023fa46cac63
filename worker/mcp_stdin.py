"""stdin for `parley mcp` over stdio, read on the event loop rather than in a thread.

The SDK reads stdin in a worker thread, and a thread blocked in `read()` can be neither
cancelled nor left behind: on SIGTERM, with the client still holding the pipe open, the
process would wait for a next line that never comes. A pipe read through the loop stops at
once. Anything that is not a pipe, socket or terminal (a file, /dev/null) cannot be watched
by the loop; it never blocks for long either, so the SDK's own reader is left to it.

A line longer than `MAX_MESSAGE` is dropped with a warning, so that one client cannot make
the server hold an unbounded line in memory.

At stdin's end the SDK's dispatcher cancels the requests still in flight, so a client that
pipes its requests and closes stdin behind them (`printf ... | parley mcp`) would get only the
answers that happened to be ready. `Unanswered` holds the end back until every request read
has its answer (or was cancelled by the client); a signal still stops the server at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import AsyncIterator

import anyio
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCError, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

log = logging.getLogger(__name__)
MAX_MESSAGE = 4 * 1024 * 1024  # bytes of one JSON-RPC message, as over HTTP
CANCELLED = "notifications/cancelled"
Message = SessionMessage | Exception


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


class Unanswered:
    """The client's requests read and not answered yet; see the module's docstring."""

    def __init__(self) -> None:
        self._ids: set[int | str] = set()
        self._changed = anyio.Event()

    def reading(self, stream: ReadStream[Message]) -> ReadStream[Message]:
        """`stream`, noting each request, whose end waits for their answers."""
        return _Reading(stream, self)

    def writing(self, stream: WriteStream[SessionMessage]) -> WriteStream[SessionMessage]:
        """`stream`, noting each answer."""
        return _Writing(stream, self)

    def read(self, item: Message) -> None:
        message = item.message if isinstance(item, SessionMessage) else None
        if isinstance(message, JSONRPCRequest):
            self._ids.add(message.id)
        elif isinstance(message, JSONRPCNotification) and message.method == CANCELLED:
            self._answered((message.params or {}).get("requestId"))

    def wrote(self, item: SessionMessage) -> None:
        if isinstance(item.message, JSONRPCResponse | JSONRPCError):
            self._answered(item.message.id)

    async def settled(self) -> None:
        """Until every request read is answered."""
        while self._ids:
            await self._changed.wait()

    def _answered(self, request: object) -> None:
        if isinstance(request, int | str) and request in self._ids:
            self._ids.discard(request)
            self._changed.set()
            self._changed = anyio.Event()


class _Reading:
    """A read stream whose end comes only once its requests are answered."""

    def __init__(self, inner: ReadStream[Message], requests: Unanswered) -> None:
        self._inner = inner
        self._requests = requests

    @property
    def last_context(self) -> object:
        """The sender's context, which the SDK's dispatcher looks for on a stream."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Message:
        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            await self._requests.settled()
            raise
        self._requests.read(item)
        return item

    def __aiter__(self) -> _Reading:
        return self

    async def __anext__(self) -> Message:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Reading:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Writing:
    """A write stream that tells `Unanswered` about each answer it carries."""

    def __init__(self, inner: WriteStream[SessionMessage], requests: Unanswered) -> None:
        self._inner = inner
        self._requests = requests

    async def send(self, item: SessionMessage, /) -> None:
        await self._inner.send(item)
        self._requests.wrote(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _Writing:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
