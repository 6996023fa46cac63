"""`run_python`'s sandbox, tried as a worker tries it at start: a real program through the
real sandbox (`bot.sandbox.probe`), so every layer is checked (namespaces, mounts, the
system-call filter, the interpreter inside). Run the doctor where the workers run (in their
container): the answer is the machine's.
"""

from __future__ import annotations

from bot.sandbox import probe
from worker.doctor.checks import in_thread
from worker.doctor.report import Finding, failed, ok

FIX = (
    "let the worker make new namespaces: under Docker, the worker service's security_opt "
    '["seccomp=unconfined", "apparmor=unconfined"] (docker-compose.yml); on Ubuntu 23.10+, '
    "sysctl kernel.apparmor_restrict_unprivileged_userns=0. Where run_python is not "
    "wanted, `parley doctor --skip sandbox`"
)
STUCK = "try again when the machine is less busy, or allow more time (--timeout)"


async def check_sandbox() -> list[Finding]:
    probe.start()
    reason = await in_thread(probe.unavailable)
    if reason is None:
        return [ok("sandbox", "run_python's and shell's sandbox works here")]
    return [failed("sandbox", f"run_python and shell are not offered here: {reason}", FIX)]
