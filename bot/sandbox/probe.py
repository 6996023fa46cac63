"""Whether this machine can give `run_python` its sandbox: asked once per process.

The answer comes from running a real program through the real sandbox, so every layer is
checked (namespaces, mounts, the system-call filter, the interpreter inside). Where any of
them is refused, the tool is not offered at all and the reason is logged once: a weaker
sandbox is never substituted silently.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import threading

from bot.sandbox.limits import SandboxLimits
from bot.sandbox.runner import SandboxError, run_program

log = logging.getLogger(__name__)
EXPECTED = "sandbox ready"
PROBE = f"import socket\ntry:\n    socket.socket()\nexcept OSError:\n    print({EXPECTED!r})\n"
PROBE_LIMITS = SandboxLimits(cpu_seconds=10, timeout=30.0)


async def _check() -> str | None:
    try:
        outcome = await run_program(PROBE, PROBE_LIMITS)
    except SandboxError as exc:
        return str(exc)
    except OSError as exc:
        return f"the sandbox could not start: {exc}"
    if outcome.exit_code == 0 and outcome.output.strip() == EXPECTED:
        return None
    return "a test program did not run as expected: " + (outcome.output.strip()[-200:] or "")


_answer: concurrent.futures.Future[str | None] = concurrent.futures.Future()
_starting = threading.Lock()
_started: list[bool] = []


def start() -> None:
    """Begin the check, once, on a loop of its own in a thread of its own: the caller may be
    inside a running loop (the worker builds its agent there), and a worker starts it first
    thing so that its tenth of a second passes while the worker imports the rest."""
    with _starting:
        if _started:
            return
        _started.append(True)

    def check() -> None:
        try:
            _answer.set_result(asyncio.run(_check()))
        except BaseException as exc:  # a thread must not die with it; the caller reads it
            _answer.set_result(f"the check itself failed: {type(exc).__name__}")

    threading.Thread(target=check, name="sandbox-probe", daemon=True).start()


@functools.cache
def unavailable() -> str | None:
    """None when the sandbox works here; else why not, logged (once) as a warning."""
    start()
    reason = _answer.result()
    if reason is not None:
        log.warning("run_python and shell are not offered: %s", reason)
    return reason
