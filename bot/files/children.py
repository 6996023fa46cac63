"""A child process that reads what people send (ffmpeg, the reader process), ended whole.

Each runs in a process group of its own (`start_new_session=True`), so ending it ends
whatever it started too; its pipes are read to their end before it is reaped, since a pipe
left full would keep it from exiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

CHUNK = 64 * 1024


def kill(process: asyncio.subprocess.Process) -> None:
    """SIGKILL to the child's process group, unless it was reaped already."""
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


async def end(process: asyncio.subprocess.Process) -> None:
    """Kill the child unless it ended, read its pipes to their end and reap it."""
    kill(process)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            while await stream.read(CHUNK):
                pass
    await process.wait()
