"""A Python process that imports Parley's modules once and forks `python -m MODULE ARGS` from
then on, for the tests (`tests.support.parley` is its client).

The suite starts some 250 of Parley's processes (workers, web apps, schedulers, doctors),
and each spent 1.5 to 3 s of CPU importing the same SDKs before it did what its test is
about: on two cores, that was a third of the suite's time. A child forked from here has
them already and runs the command as `python -m` would: the module as `__main__`, the
argument list, the working folder first on `sys.path` with `PYTHONPATH` after it, exactly
the environment it was given, its own three standard streams and no other descriptor, the
default signal handlers, a session of its own when asked. What a test checks of a process's
own start (which modules it imports) still runs it afresh.

Wire: one SOCK_SEQPACKET connection per child. The client sends one JSON order
(`{"module", "args", "env", "cwd", "new_session"}`) with the child's stdin, stdout and stderr
as descriptors; the server answers the child's pid, then its exit status (`os.waitpid`'s,
as a returncode: negative for a signal) when it ends. The server ends when its stdin closes:
the test process that started it is gone.

Run as `python -m tests.support.forkserver SOCKET`; it prints `ready` once it listens.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import io
import json
import os
import runpy
import selectors
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass

# What `parley worker`, `web`, `scheduler`, `doctor`, `chat`, `migrate` and `backup` import,
# the platforms' SDKs and both models' included: each loads its share from here on.
PRELOADED = (
    "worker.cli",
    "worker.jobs",
    "worker.web",
    "worker.scheduler",
    "worker.up",
    "worker.health",
    "worker.doctor",
    "worker.doctor.run",
    "worker.mcp_server",
    "worker.backup",
    "worker.pair",
    "adapters.console",
    "adapters.telegram.egress",
    "adapters.slack.egress",
    "bot.assembly.agent",
    "bot.llm.anthropic",
    "bot.llm.openai",
    "bot.store.migrate",
    "bot.memory.vector_math",
)
ORDER_BYTES = 1 << 20  # an environment and an argument list fit many times over


@dataclass(frozen=True)
class Order:
    """What a child is to run, and its three standard streams (descriptors of this process)."""

    module: str
    args: list[str]
    env: dict[str, str]
    cwd: str
    new_session: bool
    streams: list[int]

    @classmethod
    def parse(cls, message: bytes, streams: list[int]) -> Order:
        fields = json.loads(message)
        if len(streams) != 3:
            raise ValueError(f"an order needs stdin, stdout and stderr, got {len(streams)}")
        return cls(
            fields["module"], fields["args"], fields["env"], fields["cwd"],
            bool(fields["new_session"]), streams,
        )  # fmt: skip


@dataclass
class Child:
    pid: int
    pidfd: int  # readable once the child has ended
    client: socket.socket  # told the exit status


def main() -> None:
    path = sys.argv[1]
    gc.disable()  # as `parley`'s commands do while they import (see `worker.cli._starting`)
    for name in PRELOADED:
        importlib.import_module(name)
    if threading.active_count() != 1:  # a fork keeps only the thread that forked
        sys.exit(f"forkserver: importing started threads: {threading.enumerate()}")
    gc.enable()
    gc.collect()
    gc.freeze()  # the children leave what was imported shared instead of copying it
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    order = serve(listener)  # returns only in a forked child
    become(order)


def serve(listener: socket.socket) -> Order:
    """Fork a child for each order and tell each client its child's pid and exit status,
    until stdin closes; in a child, the order it is to run."""
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ)
    children: dict[int, Child] = {}  # by pidfd
    while True:
        for key, _ in selector.select():
            if key.fileobj is listener:
                client, _ = listener.accept()
                selector.register(client, selectors.EVENT_READ)
            elif key.fd == sys.stdin.fileno():
                if not os.read(key.fd, 4096):
                    sys.exit(0)
            elif key.fd in children:
                _reap(children.pop(key.fd), selector)
            else:
                assert isinstance(key.fileobj, socket.socket)
                client = key.fileobj
                selector.unregister(client)
                order = _take(client)
                if order is None:
                    continue
                pid = os.fork()
                if pid == 0:
                    _leave(selector, listener, children)
                    client.close()
                    return order
                for fd in set(order.streams):
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                children[pidfd] = Child(pid, pidfd, client)
                selector.register(pidfd, selectors.EVENT_READ)
                client.send(str(pid).encode())


def _take(client: socket.socket) -> Order | None:
    """The client's order, or None (the client closed, or sent what is no order: told so)."""
    streams: list[int] = []
    try:
        message, streams, _, _ = socket.recv_fds(client, ORDER_BYTES, 3)
        if message:
            return Order.parse(message, streams)
    except (ValueError, KeyError, OSError) as exc:
        print(f"forkserver: a bad order: {exc!r}", file=sys.stderr, flush=True)
    for fd in streams:
        os.close(fd)
    client.close()
    return None


def _reap(child: Child, selector: selectors.BaseSelector) -> None:
    selector.unregister(child.pidfd)
    os.close(child.pidfd)
    _, status = os.waitpid(child.pid, 0)
    with contextlib.suppress(OSError):  # the client may have stopped listening
        child.client.send(str(os.waitstatus_to_exitcode(status)).encode())
    child.client.close()


def _leave(
    selector: selectors.BaseSelector, listener: socket.socket, children: dict[int, Child]
) -> None:
    """In a new child: nothing of the server's stays open in it."""
    for key in list(selector.get_map().values()):
        if isinstance(key.fileobj, socket.socket) and key.fileobj is not listener:
            key.fileobj.close()
    selector.close()
    listener.close()
    for child in children.values():
        os.close(child.pidfd)
        child.client.close()


def become(order: Order) -> None:
    """Turn this forked child into `python -m MODULE ARGS` started with the order's streams,
    folder and environment; the module's end (SystemExit included) ends the process."""
    if order.new_session:
        os.setsid()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    for target, fd in enumerate(order.streams):
        os.dup2(fd, target)
    for fd in set(order.streams):
        if fd > 2:
            os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.chdir(order.cwd)
    os.environ.clear()
    os.environ.update(order.env)
    time.tzset()
    _python_path(order)
    unbuffered = bool(order.env.get("PYTHONUNBUFFERED"))
    # Python's own choice at start: stdout flushed by line only on a terminal, stderr always.
    for stream, by_line in ((sys.stdout, os.isatty(1)), (sys.stderr, True)):
        assert isinstance(stream, io.TextIOWrapper)
        stream.reconfigure(line_buffering=by_line, write_through=unbuffered)
    sys.argv = ["-m", *order.args]  # runpy puts the module's path first
    runpy.run_module(order.module, run_name="__main__", alter_sys=True)
    sys.exit(0)


def _python_path(order: Order) -> None:
    """`sys.path` as `python -m` makes it in the order's folder with its `PYTHONPATH`: this
    server's own first entry and `PYTHONPATH` give way to the order's."""
    given = [p for p in order.env.get("PYTHONPATH", "").split(os.pathsep) if p]
    rest = [p for p in sys.path[1:] if p not in SERVER_PYTHONPATH]
    sys.path[:] = [order.cwd, *given, *rest]


SERVER_PYTHONPATH = frozenset(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)


if __name__ == "__main__":
    main()
