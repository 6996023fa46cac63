"""`python -I -S launch.py WORKER PATH ARGV0 [ARGS...]`: run a stdio MCP server for the worker
whose pid is WORKER, and end it, with every process it started, when the worker ends.

A worker stops its servers when it stops, but a worker killed with SIGKILL (or by the OOM
killer) runs no code at all: its servers would be re-parented to init and live on, a server
that hangs or never finished starting for ever, with the processes it started (the node an
npx runs, a shell's children). So the worker starts each server through this launcher, which
stays between them in the server's process group: the kernel tells it when the worker dies
(PR_SET_PDEATHSIG, where Linux has it; every second it also compares its parent's pid with
WORKER), and it then ends the whole group, SIGTERM first, SIGKILL after `GRACE` seconds. When
the server ends on its own, the launcher kills what the server left behind in its group, and
itself with it.

It is a script of the standard library alone, run with `-I -S`: it starts in a few tens of
milliseconds, holds about 9 MB, and reads neither Parley's settings nor its environment.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
WATCHED = {signal.SIGCHLD, signal.SIGHUP, signal.SIGTERM}
# Back to their defaults in the server: the launcher blocks these, and Python ignores SIGPIPE.
DEFAULTS = {*WATCHED, signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ}
POLL = 1.0  # seconds between looks at the parent
GRACE = 2.0  # between SIGTERM and SIGKILL when the worker is gone


def watch_parent(worker: int) -> bool:
    """Ask for SIGHUP when the parent dies; False if it already has (a re-parented launcher)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGHUP, 0, 0, 0)
    return os.getppid() == worker


def wait(signals: set[signal.Signals], timeout: float) -> None:
    """Until one of `signals` (blocked) comes, or `timeout` seconds."""
    if hasattr(signal, "sigtimedwait"):
        signal.sigtimedwait(signals, timeout)
    else:  # macOS has none: look again soon
        time.sleep(min(timeout, 0.1))


def exited(child: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        return os.waitpid(child, os.WNOHANG)[0] == child
    return True


def end_group(child: int) -> None:
    """The worker is gone: ask the group to stop, then kill it (and this process)."""
    with contextlib.suppress(OSError):
        os.killpg(0, signal.SIGTERM)  # blocked here, so only the others see it
    deadline = time.monotonic() + GRACE
    while not exited(child) and time.monotonic() < deadline:
        wait({signal.SIGCHLD}, max(0.0, deadline - time.monotonic()))
    os.killpg(0, signal.SIGKILL)


def main(argv: list[str]) -> int:
    worker, path, args = int(argv[1]), argv[2], argv[3:]
    signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    if not watch_parent(worker):
        return 1
    try:
        child = os.posix_spawn(path, args, os.environ, setsigmask=(), setsigdef=DEFAULTS)
    except OSError as exc:
        print(f"cannot start {args[0]!r}: {exc.strerror}", file=sys.stderr, flush=True)
        return 127
    while True:
        wait(WATCHED, POLL)
        if os.getppid() != worker:
            end_group(child)
        if exited(child):
            os.killpg(0, signal.SIGKILL)  # what the server left behind, and this launcher


if __name__ == "__main__":
    sys.exit(main(sys.argv))
