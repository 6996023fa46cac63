"""A JSON message body read without holding the web process: a small one in place, a large one
streamed into a child process that parses and decodes it (`adapters.http.message_body`),
whose memory and CPU are bounded like a file reader's, and killed past its seconds.

The body is never held whole here: it goes to the child chunk by chunk as it arrives, and
past the message's limit the child is killed and the request answered 413 at once. What
comes back is bounded too: the files' bytes, at most the message's limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from typing import Any

from aiohttp import web

from adapters.http.message_body import IN_PROCESS, Decoded, decode
from bot.files import children
from bot.files.reading import Limits, ReadLimits, environment

log = logging.getLogger(__name__)

CHUNK = 64 * 1024
HEAD = 1024 * 1024  # bytes of the child's first line (its problems, when it has some)


class BodyTooLarge(Exception):
    """The body passed the message's limit as it arrived."""


async def read_json_message(
    request: web.Request, limits: Limits, reading: ReadLimits, most: int
) -> Decoded:
    """The message posted as JSON, or why it is refused (`Decoded.status`); BodyTooLarge
    once more than `most` bytes came."""
    length = request.content_length
    if length is not None and length <= IN_PROCESS:
        # to its end: one read gives what has arrived so far, which may be part of the body
        raw = await request.content.read()
        if len(raw) > most:
            raise BodyTooLarge
        return decode(raw, limits)
    return await _in_child(request, limits, reading, most)


async def _in_child(
    request: web.Request, limits: Limits, reading: ReadLimits, most: int
) -> Decoded:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "adapters.http.message_body",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, start_new_session=True, env=environment(),
        limit=HEAD,
    )  # fmt: skip
    job = {"memory_mb": reading.memory_mb, "seconds": reading.seconds,
           "limits": {"files": limits.files, "file_bytes": limits.file_bytes,
                      "turn_bytes": limits.turn_bytes}}  # fmt: skip
    answer = asyncio.create_task(_answer(process, limits.turn_bytes))
    try:
        async with asyncio.timeout(reading.seconds * 3):
            await _feed(request, process, json.dumps(job).encode() + b"\n", most)
            return await answer
    except TimeoutError:
        return Decoded(status=422, error="invalid request", problems=[
            f"body: it took longer than {reading.seconds * 3:g} s to read"])  # fmt: skip
    finally:
        answer.cancel()
        children.kill(process)
        await process.wait()


async def _feed(request: web.Request, process: asyncio.subprocess.Process, job: bytes,
                most: int) -> None:  # fmt: skip
    """The job, then the body as it arrives; BodyTooLarge past `most` bytes."""
    stdin = process.stdin
    assert stdin is not None
    came = 0
    with contextlib.suppress(ConnectionError):
        stdin.write(job)
        async for chunk in request.content.iter_chunked(CHUNK):
            came += len(chunk)
            if came > most:
                raise BodyTooLarge
            stdin.write(chunk)
            await stdin.drain()
        stdin.close()


async def _answer(process: asyncio.subprocess.Process, most: int) -> Decoded:
    """The child's answer: its line, then the files' bytes (at most `most` in all)."""
    stdout = process.stdout
    assert stdout is not None
    try:
        said: dict[str, Any] = json.loads(await stdout.readline())
        if "status" in said:
            return Decoded(status=int(said["status"]), error=str(said["error"]),
                           problems=[str(p) for p in said["problems"]])  # fmt: skip
        sizes = [(str(name), int(size)) for name, size in said["files"]]
        if sum(size for _, size in sizes) > most:
            raise ValueError("more bytes than a message may carry")
        files = [(name, await stdout.readexactly(size)) for name, size in sizes]
        return Decoded(str(said["text"]), files)
    except (ValueError, KeyError, TypeError, asyncio.IncompleteReadError):
        log.warning("a message body's reader ended with %s and no answer", process.returncode)
        return Decoded(status=422, error="invalid request", problems=[
            "body: it could not be read within the limits of a message"])  # fmt: skip
