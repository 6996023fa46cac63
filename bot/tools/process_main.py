"""A helper process for tools with `isolation="process"`: `python -m bot.tools.process_main`.

It imports the modules named on its command line, then reads calls from stdin and writes
their outcomes to stdout, one length-prefixed pickle each: a call is (module, qualified name
of the tool's function, context, argument values), or None to ask whether it is ready; an
outcome is (True, text) or (False, the exception). The tool is found by importing its
module, so only module-level tools can run here. Whatever the tool prints goes to stderr, so
it cannot corrupt the replies. The helper ends when its stdin closes (its worker is gone).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
import pickle
import signal
import struct
import sys
from typing import Any, BinaryIO

from bot.tools.base import Tool, ToolError

HEADER = struct.Struct("!I")


def find_tool(module: str, qualname: str) -> Tool:
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if not isinstance(found, Tool):
        raise ToolError(f"{qualname} in {module} is not a module-level @tool")
    return found


def outcome(job: bytes) -> bytes:
    result: tuple[bool, Any] = (True, "ready")
    try:
        if call := pickle.loads(job):
            module, qualname, ctx, values = call
            tool = find_tool(module, qualname)
            if inspect.iscoroutinefunction(tool.function):
                result = (True, asyncio.run(tool.run(ctx, values)))
            else:
                result = (True, tool.run_sync(ctx, values))
    except BaseException as exc:  # reported to the worker, which decides what the model reads
        result = (False, exc)
    try:
        return pickle.dumps(result)
    except Exception:  # an exception that does not pickle: keep its type's name and text
        failure = RuntimeError(f"{type(result[1]).__name__}: {result[1]}")
        return pickle.dumps((False, failure))


def read(stream: BinaryIO, size: int) -> bytes | None:
    data = stream.read(size)
    return data if len(data) == size else None


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    while (header := read(requests, HEADER.size)) is not None:
        job = read(requests, HEADER.unpack(header)[0])
        if job is None:
            return
        reply = outcome(job)
        replies.write(HEADER.pack(len(reply)) + reply)
        replies.flush()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the worker, which stops us
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    for module in sys.argv[1:]:
        importlib.import_module(module)
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
