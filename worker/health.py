"""`parley health web|worker|scheduler`: the probes of Docker's HEALTHCHECK and Kubernetes.

A worker or a scheduler serves no port, so each keeps a signal file in the temporary folder
(`$TMPDIR/parley-health/{role}-{pid}.json`), written once with how long each beat holds
(`for`, seconds), and touched by its event loop every few seconds: the file's time of change
is the beat, one system call where rewriting and renaming it took a hundred times the CPU,
most of an idle scheduler's own. The probe runs in the same container, so it finds its own
process's file there without knowing any id, and needs no Redis, no settings and no network:
it reads the file, checks that the process is alive and that its last touch still holds (a
file names its host too: in a temporary folder shared by mistake, another host's process is
never taken for this one's). A worker touches its file only while its liveness key in Redis
is refreshed (`bot.mailbox.liveness`): a worker whose loop stalls, or that cannot beat, is
reported. A scheduler touches its file from its loop, leading or standing by alike: both are
healthy. Why a file rather than a key in Redis: the probe then tells this container's process
from every other worker's, costs nothing, and a process killed with SIGKILL (which cleans
nothing up) is found dead by its pid at once.

`web` asks the process's own `/readyz` (`adapters.http.readiness`) on PARLEY_HTTP_PORT, with
httpx, imported then only: a worker and a scheduler keep their signals with this module, and
httpx with the console its command line loads costs them a tenth of a second at start.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

FRESH_S = 10.0  # how long a signal holds: several missed rewrites before a probe fails
# How often a process rewrites its signal: three times in FRESH_S, and at rest no more often
# (a file written and renamed each second was the largest share of an idle scheduler's CPU).
EVERY_S = 3.0
PROBE_TIMEOUT_S = 5.0
ROLES = ("worker", "scheduler")


def signal_dir() -> Path:
    """Where the signals are: the temporary folder, private to a container."""
    return Path(tempfile.gettempdir()) / "parley-health"


class Signal:
    """One process's signal file."""

    def __init__(self, role: str, folder: Path | None = None, pid: int | None = None) -> None:
        self.pid = os.getpid() if pid is None else pid
        self.path = (folder or signal_dir()) / f"{role}-{self.pid}.json"
        self._holds_for: float | None = None  # what the file on disk says, once written

    def write(self, fresh_for: float = FRESH_S) -> None:
        """Say this process holds for `fresh_for` more seconds: a touch of the file, or the
        file written whole (then renamed, so a probe never reads half of it) the first
        time, when `fresh_for` changes, or when someone removed it."""
        if self._holds_for == fresh_for:
            try:
                os.utime(self.path)
                return
            except FileNotFoundError:
                pass
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".tmp")
        held = {"pid": self.pid, "host": socket.gethostname(), "for": fresh_for}
        partial.write_text(json.dumps(held))
        partial.replace(self.path)
        self._holds_for = fresh_for

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink()


async def keep(signal: Signal, every: float, holds: Callable[[], bool]) -> None:
    """Rewrite `signal` every `every` s while `holds()` says so, until cancelled; removed
    on the way out (a clean stop is not a failure to report as a stale file)."""
    try:
        while True:
            if holds():
                with contextlib.suppress(OSError):  # a full disk: the probe will say so
                    signal.write(max(FRESH_S, every * 3))
            await asyncio.sleep(every)
    finally:
        signal.remove()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def check_role(role: str, folder: Path | None = None, now: float | None = None) -> str | None:
    """None if this host's `role` processes hold, else one line saying what is wrong."""
    folder = folder or signal_dir()
    now = time.time() if now is None else now
    here = socket.gethostname()
    live, stale = 0, []
    for path in sorted(folder.glob(f"{role}-*.json")):
        try:
            held = json.loads(path.read_text())
            pid, until = int(held["pid"]), path.stat().st_mtime + float(held["for"])
            host = str(held.get("host", here))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # being replaced, or not ours
        if host != here:
            continue  # another host's, in a folder shared by mistake: its pid means nothing here
        if not _alive(pid):
            with contextlib.suppress(OSError):
                path.unlink()  # a killed process's: it could not remove it
            continue
        live += 1
        if until < now:
            stale.append(
                f"{role} {pid} is not beating (its signal ran out {now - until:.0f} s ago)"
            )
    if stale:
        return "; ".join(stale)
    if live == 0:
        return f"no {role} process is running here (no signal in {folder})"
    return None


def check_web(host: str, port: int, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """None if `parley web` on host:port answers /readyz with 200, else one line why."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    url = f"http://{shown}:{port}/readyz"
    import httpx  # noqa: PLC0415  (see the module docstring)

    try:
        answer = httpx.get(url, timeout=timeout)
    except httpx.HTTPError as exc:
        return f"web is not answering at {url} ({type(exc).__name__})"
    if answer.status_code == 200:
        return None
    try:
        failed = answer.json().get("failed", {})
    except ValueError:
        failed = {}
    said = ", ".join(f"{name}: {why}" for name, why in failed.items())
    return f"web is not ready ({answer.status_code}): {said or answer.text[:200]}"
