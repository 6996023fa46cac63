"""Parley's commands as processes of their own, for the tests: `python -m worker ARGS`,
forked from a process that has imported Parley once (`tests.support.forkserver`) rather
than started afresh, with asyncio's process interface (`start_parley`) or subprocess.run's
(`run_parley`).

Each test process (each xdist worker) starts its own fork server the first time it needs
one; the server ends with it. A process that must start afresh (what it imports is the
test's subject, or it runs under a wrapper such as `unshare`) is started with
`asyncio.create_subprocess_exec` as before; `Process` is what both kinds offer.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any, Protocol

ROOT = Path(__file__).resolve().parents[2]
PIPE, STDOUT, DEVNULL = subprocess.PIPE, subprocess.STDOUT, subprocess.DEVNULL
Stream = int | IO[Any] | None  # PIPE, DEVNULL, STDOUT, a descriptor, an open file; None inherits
Reader = asyncio.StreamReader | None
Writer = asyncio.StreamWriter | None
READY_WITHIN_S = 120.0  # the server's imports, on a busy machine


class Process(Protocol):
    """What the tests use of a process they started, forked or executed."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...
    async def wait(self) -> int: ...
    def send_signal(self, sig: int) -> None: ...
    def terminate(self) -> None: ...
    def kill(self) -> None: ...


class ForkServer:
    """This test process's fork server, started on first use and ended with the process
    (its stdin closes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._server: subprocess.Popen[bytes] | None = None
        self._address = ""

    def address(self) -> str:
        """The server's socket, once it listens (blocking: the first call waits for its imports)."""
        with self._lock:
            if self._server is None or self._server.poll() is not None:
                self._start()
            return self._address

    def _start(self) -> None:
        folder = tempfile.mkdtemp(prefix="parley-forks-")
        self._address = os.path.join(folder, "socket")
        self._server = subprocess.Popen(
            [sys.executable, "-m", "tests.support.forkserver", self._address],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        atexit.register(self._stop, self._server, folder)
        assert self._server.stdout is not None
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            said = pool.submit(self._server.stdout.readline).result(READY_WITHIN_S)
        if said != b"ready\n":
            raise RuntimeError(f"the fork server did not start (exit {self._server.poll()})")

    @staticmethod
    def _stop(server: subprocess.Popen[bytes], folder: str) -> None:
        assert server.stdin is not None
        server.stdin.close()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(folder, ignore_errors=True)


SERVER = ForkServer()


class ParleyProcess:
    """A forked `python -m worker ARGS`, as `asyncio.subprocess.Process` offers it: its exit
    status comes over the order's connection, its signals go through a pidfd (never to a
    process that took its pid after it ended)."""

    def __init__(
        self,
        pid: int,
        status: socket.socket,
        stdin: asyncio.StreamWriter | None,
        stdout: asyncio.StreamReader | None,
        stderr: asyncio.StreamReader | None,
    ) -> None:
        self.pid = pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self._status = status
        self._pidfd: int | None = None
        with contextlib.suppress(ProcessLookupError):  # ended at once, and reaped already
            self._pidfd = os.pidfd_open(pid)
        self._returncode: int | None = None
        self._waiting: asyncio.Task[None] | None = None

    @property
    def returncode(self) -> int | None:
        if self._returncode is None and (self._waiting is None or self._waiting.done()):
            with contextlib.suppress(BlockingIOError):  # not ended yet
                self._ended(self._status.recv(64))
        return self._returncode

    async def wait(self) -> int:
        while self.returncode is None:
            loop = asyncio.get_running_loop()
            if self._waiting is None or self._waiting.get_loop() is not loop:
                self._waiting = loop.create_task(self._read_status(loop))
            await asyncio.shield(self._waiting)
        assert self._returncode is not None
        return self._returncode

    async def _read_status(self, loop: asyncio.AbstractEventLoop) -> None:
        self._ended(await loop.sock_recv(self._status, 64))

    def _ended(self, said: bytes) -> None:
        if not said:
            raise RuntimeError(f"the fork server left before process {self.pid} ended")
        self._returncode = int(said)
        self._status.close()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None

    def send_signal(self, sig: int) -> None:
        if self.returncode is not None or self._pidfd is None:
            raise ProcessLookupError(self.pid)
        with contextlib.suppress(ProcessLookupError):  # ended, not yet told: nothing to do
            signal.pidfd_send_signal(self._pidfd, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    async def communicate(self, input: bytes | None = None) -> tuple[bytes, bytes]:
        """What it wrote to its piped stdout and stderr (b"" for one not piped) once it ended."""

        async def feed() -> None:
            if self.stdin is not None:
                if input:
                    self.stdin.write(input)
                    await self.stdin.drain()
                self.stdin.close()

        async def read(stream: Reader) -> bytes:
            return b"" if stream is None else await stream.read()

        _, out, err = await asyncio.gather(feed(), read(self.stdout), read(self.stderr))
        await self.wait()
        return out, err


async def start_parley(
    *args: str,
    env: dict[str, str],
    cwd: str | Path | None = None,
    stdin: Stream = None,
    stdout: Stream = None,
    stderr: Stream = None,
    start_new_session: bool = False,
    module: str = "worker",
) -> ParleyProcess:
    """`python -m worker ARGS` (or another `module` of this checkout's) with exactly `env`,
    in `cwd`, its streams as `asyncio.create_subprocess_exec` takes them."""
    folder, address = await asyncio.to_thread(_prepared, cwd, env)
    loop = asyncio.get_running_loop()
    ends = _Ends(stdin, stdout, stderr)
    order = {
        "module": module,
        "args": list(args),
        "env": env,
        "cwd": folder,
        "new_session": start_new_session,
    }
    status = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    status.setblocking(False)
    try:
        await loop.sock_connect(status, address)
        socket.send_fds(status, [json.dumps(order).encode()], ends.child)
        said = await loop.sock_recv(status, 64)
    except BaseException:
        status.close()
        ends.close_ours()
        raise
    finally:
        ends.close_child()
    if not said:
        ends.close_ours()
        raise RuntimeError("the fork server refused the order (see its stderr)")
    return ParleyProcess(int(said), status, *await ends.streams(loop))


def _prepared(cwd: str | Path | None, env: dict[str, str]) -> tuple[str, str]:
    """The child's folder, and the server's socket once it listens.

    A forked process runs this checkout's modules, already imported: one that is to run
    another copy of Parley (in its folder or on its `PYTHONPATH`) must be executed."""
    folder = Path(cwd if cwd is not None else Path.cwd()).resolve()
    for path in [str(folder), *env.get("PYTHONPATH", "").split(os.pathsep)]:
        if path and Path(path).resolve() != ROOT and (Path(path) / "worker").is_dir():
            raise ValueError(f"{path} holds another copy of Parley: execute it instead")
    return str(folder), SERVER.address()


class _Ends:
    """The child's three descriptors for an order, and this side's ends of its pipes."""

    def __init__(self, stdin: Stream, stdout: Stream, stderr: Stream) -> None:
        self._opened: list[int] = []  # closed once the server has its copies
        self.ours: list[int | None] = [None, None, None]
        self.child = [self._end(0, stdin), self._end(1, stdout)]
        self.child.append(self.child[1] if stderr == STDOUT else self._end(2, stderr))

    def _end(self, fd: int, given: Stream) -> int:
        if given is None:
            return fd  # this process's own, as an executed child inherits it
        if given == DEVNULL:
            return self._open(os.open(os.devnull, os.O_RDWR))
        if given == PIPE:
            read, write = os.pipe()
            self.ours[fd] = write if fd == 0 else read
            return self._open(read if fd == 0 else write)
        return given if isinstance(given, int) else given.fileno()

    def _open(self, fd: int) -> int:
        self._opened.append(fd)
        return fd

    def close_child(self) -> None:
        for fd in self._opened:
            os.close(fd)
        self._opened.clear()

    def close_ours(self) -> None:
        for fd in self.ours:
            if fd is not None:
                os.close(fd)

    async def streams(self, loop: asyncio.AbstractEventLoop) -> tuple[Writer, Reader, Reader]:
        writer = None
        if self.ours[0] is not None:
            transport, protocol = await loop.connect_write_pipe(
                asyncio.streams.FlowControlMixin, os.fdopen(self.ours[0], "wb", 0)
            )
            writer = asyncio.StreamWriter(transport, protocol, None, loop)
        return writer, await self._reader(loop, 1), await self._reader(loop, 2)

    async def _reader(self, loop: asyncio.AbstractEventLoop, fd: int) -> Reader:
        ours = self.ours[fd]
        if ours is None:
            return None
        reader = asyncio.StreamReader(loop=loop)
        protocol = asyncio.StreamReaderProtocol(reader, loop=loop)
        await loop.connect_read_pipe(lambda: protocol, os.fdopen(ours, "rb", 0))
        return reader


def run_parley(
    *args: str,
    env: dict[str, str],
    cwd: str | Path | None = None,
    input: str | None = None,
    timeout: float = 60.0,
) -> subprocess.CompletedProcess[str]:
    """`python -m worker ARGS` run to its end as `subprocess.run(..., capture_output=True,
    text=True)` runs it (stdin a pipe fed `input` when one is given, else inherited)."""

    async def run() -> subprocess.CompletedProcess[str]:
        proc = await start_parley(
            *args, env=env, cwd=cwd, stdin=PIPE if input is not None else None,
            stdout=PIPE, stderr=PIPE,
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(
                proc.communicate(None if input is None else input.encode()), timeout
            )
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise subprocess.TimeoutExpired(["parley", *args], timeout) from None
        command = [sys.executable, "-m", "worker", *args]
        code = await proc.wait()
        return subprocess.CompletedProcess(command, code, out.decode(), err.decode())

    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # also from a test's running loop
        return pool.submit(asyncio.run, run()).result()
