"""What a stdio MCP server writes, read within bounds the server cannot push.

stdout: messages, one a line. A line is kept only up to a limit while it is read: a tool's
result up to what the model may see of it (`result_bytes`, from PARLEY_TOOL_OUTPUT_LIMIT),
any other message up to `MESSAGE_LIMIT`; the rest of the line is counted and dropped as it
arrives, its last `TAIL` bytes kept for the request id some servers write last. A cut result
is read as JSON cut short (pydantic's partial parsing) and answers its call with its first
part and a note that says how large it was; any other cut message answers its request with
an error. A line that is not JSON-RPC costs nothing but a count: after `BAD_LINES` of them the
connection is given up with one reason, instead of a traceback logged per line and a server
left "connecting" while it prints. A blank line is let through, as is a banner or two.

stderr: only its last `STDERR_KEPT` bytes are kept, in memory, for the one line that says why
a server failed. It is read at `STDERR_RATE` bytes a second at most (after a burst), so a
server that floods it waits on its pipe, as on a slow terminal, instead of filling a disk or
keeping the worker busy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream
from mcp.shared.message import SessionMessage
from mcp_types import (
    INTERNAL_ERROR,
    CallToolResult,
    ContentBlock,
    ErrorData,
    JSONRPCError,
    JSONRPCResponse,
    TextContent,
    jsonrpc_message_adapter,
)
from pydantic import TypeAdapter, ValidationError
from pydantic_core import from_json

MESSAGE_LIMIT = 4 * 1024 * 1024  # bytes of a message that is not a tool's result
TAIL = 4096  # bytes kept of the end of a line cut short
BAD_LINES = 5  # lines that are not JSON-RPC before the connection is given up
STDERR_KEPT = 4096
STDERR_RATE = 1024 * 1024  # bytes a second, after a burst of STDERR_BURST
STDERR_BURST = 4 * 1024 * 1024
SAMPLE = 60  # characters of a bad line shown in the reason
CUT = "parley/cut"  # in the `_meta` of a result cut as it arrived: the bytes it had
LAST_ID = re.compile(r'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*[,}]')
BLOCK = TypeAdapter[ContentBlock](ContentBlock)


class Garbled(Exception):
    """The server writes lines that are not JSON-RPC to stdout."""


def result_bytes(output_limit: int) -> int:
    """Bytes of a result's line that hold its first `output_limit` characters: at most 4 a
    character in UTF-8 JSON (6 for a rare escaped control character), and the envelope."""
    return output_limit * 4 + 4096


class StdoutLines:
    """A server's stdout, cut into messages within bounds; see the module's docstring."""

    def __init__(self, output_limit: int) -> None:
        self.output_limit = output_limit
        self.result_limit = result_bytes(output_limit)
        self._head = bytearray()
        self._tail = bytearray()
        self._size = 0
        self._limit = self.result_limit  # until the line is known not to be a result
        self._known = False
        self._bad = 0
        self._first_bad = ""

    def feed(self, chunk: bytes) -> Iterator[SessionMessage]:
        """The messages `chunk` completes; raises Garbled after too many bad lines."""
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            self._take(chunk[start:end])
            start = end + 1
            message = self._line()
            if message is not None:
                yield message
        self._take(chunk[start:])

    def _take(self, part: bytes) -> None:
        self._size += len(part)
        while part:
            room = self._limit - len(self._head)
            if room <= 0:
                self._tail += part
                del self._tail[:-TAIL]
                return
            self._head += part[:room]
            part = part[room:]
            if not self._known and len(self._head) >= self.result_limit:
                self._known = True  # whether it is a result, from its start
                self._limit = self.result_limit if _is_result(self._head) else MESSAGE_LIMIT

    def _line(self) -> SessionMessage | None:
        head, tail, size = bytes(self._head), bytes(self._tail), self._size
        self._head.clear()
        self._tail.clear()
        self._size, self._limit, self._known = 0, self.result_limit, False
        if not head.strip():
            return None
        if size == len(head):
            text = head.decode("utf-8", errors="replace")
            try:
                return SessionMessage(jsonrpc_message_adapter.validate_json(text, by_name=False))
            except ValueError:
                self._bad_line(text)
                return None
        cut = self._salvage(head, tail, size)
        if cut is None:
            self._bad_line(head[:SAMPLE].decode(errors="replace"))
        return cut

    def _bad_line(self, text: str) -> None:
        self._bad += 1
        self._first_bad = self._first_bad or text.strip()[:SAMPLE]
        if self._bad >= BAD_LINES:
            raise Garbled(
                f"it wrote {self._bad} lines that are not JSON-RPC to stdout, "
                f"the first: {self._first_bad!r}"
            )

    def _salvage(self, head: bytes, tail: bytes, size: int) -> SessionMessage | None:
        """The answer a line cut short still gives: its result's first part, or an error."""
        try:
            partial = from_json(head, allow_partial="trailing-strings")
        except ValueError:
            return None
        if not isinstance(partial, dict) or "method" in partial:
            return None  # a request or notification of the server's: nothing waits for it
        request = partial["id"] if "id" in partial else _last_id(tail)
        if isinstance(request, bool) or not isinstance(request, int | str):
            return None
        result = partial.get("result")
        if not (isinstance(result, dict) and isinstance(result.get("content"), list)):
            error = ErrorData(
                code=INTERNAL_ERROR,
                message=f"the answer was {size:,} bytes, past the limit of {MESSAGE_LIMIT:,}",
            )
            return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request, error=error))
        text = self._cut_text(result["content"], size, len(head))
        failed = result.get("isError") is True
        content = [{"type": "text", "text": text}]
        cut = {"content": content, "isError": failed, "_meta": {CUT: size}}
        return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request, result=cut))

    def _cut_text(self, blocks: list[Any], size: int, kept: int) -> str:
        """The text of the blocks read in full or in part, within the output limit, and a
        note on what was left out."""
        texts = []
        for raw in blocks:
            try:
                block = BLOCK.validate_python(raw)
            except ValidationError:
                continue  # cut before its fields, or a kind a text cannot stand for
            if isinstance(block, TextContent):
                texts.append(block.text)
        note = (
            f"[the server's answer was cut as it arrived: {size:,} bytes, of which the "
            f"first {kept:,} were read]"
        )
        budget = max(0, self.output_limit - len(note) - 1)
        return "\n".join(texts)[:budget] + "\n" + note


def was_cut(result: CallToolResult) -> bool:
    """Whether `result` was cut as it arrived (its structured content, if it had any, too)."""
    return result.meta is not None and CUT in result.meta


def _is_result(head: bytes | bytearray) -> bool:
    """Whether the start of a line is a tool's result (a result with `content`)."""
    try:
        partial = from_json(head, allow_partial="trailing-strings")
    except ValueError:
        return False
    result = partial.get("result") if isinstance(partial, dict) else None
    return isinstance(result, dict) and "content" in result


def _last_id(tail: bytes) -> object:
    """The request id at the end of a line, where some servers write it."""
    found = LAST_ID.findall(tail.decode("utf-8", errors="replace"))
    return json.loads(found[-1]) if found else None


class LastWords:
    """The last `STDERR_KEPT` bytes a server wrote to its stderr."""

    def __init__(self) -> None:
        self._kept = bytearray()
        self._pause: anyio.CancelScope | None = None
        self._hurry = False
        self._done = anyio.Event()

    def add(self, chunk: bytes) -> None:
        self._kept += chunk
        del self._kept[:-STDERR_KEPT]

    def last_line(self) -> str:
        """The last line written, if any."""
        lines = self._kept.decode("utf-8", errors="replace").splitlines()
        return next((line.strip() for line in reversed(lines) if line.strip()), "")

    async def read(self, stream: ByteReceiveStream) -> None:
        """Keep the end of `stream` until it ends, reading at `STDERR_RATE` at most."""
        level, last = 0.0, anyio.current_time()
        try:
            async for chunk in stream:
                self.add(chunk)
                now = anyio.current_time()
                level = max(0.0, level - (now - last) * STDERR_RATE) + len(chunk)
                last = now
                if level > STDERR_BURST and not self._hurry:
                    with anyio.CancelScope() as self._pause:
                        await anyio.sleep((level - STDERR_BURST) / STDERR_RATE)
        finally:
            self._done.set()

    async def finish(self, within: float) -> None:
        """Read what is left without pacing (the server has ended: what its pipe still holds,
        64 KB or so, ends with its last words), for `within` seconds at most."""
        self._hurry = True
        if self._pause is not None:
            self._pause.cancel()
        with anyio.move_on_after(within):
            await self._done.wait()
