"""A stdio MCP server: a child process spoken to over its stdin and stdout.

The SDK's `stdio_client` reads without bounds (a whole line, however long, and all of
stderr into the file it is given) and logs a traceback for every line that is not JSON-RPC,
so Parley runs its servers itself, with the SDK's message types and its shutdown order:
stdin closed, then SIGTERM to the server's process group, then SIGKILL. What the server
writes is read within bounds (`bot.mcp.output`), and the server is started through
`bot/mcp/launch.py`, which ends it and everything it started when the worker dies, however
the worker dies.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import anyio
from anyio.abc import Process
from mcp.client._transport import TransportStreams
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

from bot.mcp.output import LastWords, StdoutLines

LAUNCHER = Path(__file__).with_name("launch.py")
EXIT_GRACE = 2.0  # for the server to exit once its stdin is closed
KILL_GRACE = 2.0  # between SIGTERM and SIGKILL to its group
FLUSH_GRACE = 0.5  # for messages already accepted to be written before stdin closes
CHUNK = 64 * 1024
Message = SessionMessage | Exception


def program(command: str, env: Mapping[str, str], cwd: str | None) -> str:
    """The path of the program `command` names, found as a shell would (in the server's
    PATH, or relative to its `cwd`); raises what starting it would have raised."""
    if cwd is not None and not Path(cwd).is_dir():
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), cwd)
    if os.sep in command:
        path = Path(cwd or ".", command)
        if not path.exists():
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)
        if path.is_dir() or not os.access(path, os.X_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), command)
        return str(path.absolute())
    found = shutil.which(command, path=env.get("PATH", os.defpath))
    if found is None:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)
    return found


@contextlib.asynccontextmanager
async def stdio_server(
    command: str,
    args: list[str],
    env: Mapping[str, str],
    cwd: str | None,
    *,
    output_limit: int,
    words: LastWords,
) -> AsyncIterator[TransportStreams]:
    """The read and write streams of a server started now; leaving stops it and its group.
    Raises `Garbled` (in an exception group) when it writes too many lines that are not
    JSON-RPC."""
    launch = [sys.executable, "-I", "-S", str(LAUNCHER), str(os.getpid())]
    process = await anyio.open_process(
        [*launch, program(command, env, cwd), command, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
        start_new_session=True,
    )
    # No await until the task group is entered: a cancellation there would leak the process.
    read_in, read_out = anyio.create_memory_object_stream[Message](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)
    written = anyio.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(_read_stdout, process, read_in, StdoutLines(output_limit))
        group.start_soon(_write_stdin, process, write_out, read_in, written)
        if process.stderr is not None:
            group.start_soon(words.read, process.stderr)
        try:
            yield read_out, write_in
        finally:
            with anyio.CancelScope(shield=True):
                read_out.close()
                write_in.close()
                with anyio.move_on_after(FLUSH_GRACE):
                    await written.wait()
                await _stop(process)
                await words.finish(FLUSH_GRACE)
                _close_pipes(process)
                for stream in (read_in, read_out, write_in, write_out):
                    await stream.aclose()
            group.cancel_scope.cancel()


async def _read_stdout(
    process: Process, sink: anyio.abc.ObjectSendStream[Message], lines: StdoutLines
) -> None:
    """Pass the server's messages on until the session is gone, then drain what it still
    writes, so that a server blocked on a full pipe can see its stdin's end and exit."""
    assert process.stdout is not None
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        async with sink:
            async for chunk in process.stdout:
                for message in lines.feed(chunk):
                    await sink.send(message)
        return
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        async for _ in process.stdout:
            pass


async def _write_stdin(
    process: Process,
    source: anyio.abc.ObjectReceiveStream[SessionMessage],
    reading: anyio.abc.ObjectSendStream[Message],
    written: anyio.Event,
) -> None:
    assert process.stdin is not None
    try:
        async with source:
            async for item in source:
                line = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                await process.stdin.send(line.encode())
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
        await reading.aclose()  # the server stopped reading: its connection has ended
    finally:
        written.set()


async def _stop(process: Process) -> None:
    """Close stdin, give the server `EXIT_GRACE` to exit, then end its group."""
    assert process.stdin is not None
    with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        await process.stdin.aclose()
    if not await _exited(process, EXIT_GRACE):
        await terminate_posix_process_tree(process, KILL_GRACE)
    with contextlib.suppress(OSError):
        os.killpg(process.pid, signal.SIGKILL)  # anything the server left behind
    await _exited(process, KILL_GRACE)


def _close_pipes(process: Process) -> None:
    """Close the pipes, which a process that left the group may still hold open (rather
    than `wait()` for them, as Python 3.11's does)."""
    transport = getattr(getattr(process, "_process", None), "_transport", None)
    close = getattr(transport, "close", None)
    if callable(close):
        close()


async def _exited(process: Process, within: float) -> bool:
    """Whether the launcher has exited, after waiting up to `within` seconds."""
    with anyio.move_on_after(within):
        while process.returncode is None:  # noqa: ASYNC110 (wait() waits for the pipes too)
            await anyio.sleep(0.01)
    return process.returncode is not None
