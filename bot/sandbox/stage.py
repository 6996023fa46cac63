"""The stage: the process the worker starts to run one program in the sandbox.

    sandbox -I -S -    (the interpreter, with `runner.STAGE_SCRIPT` on its stdin)

Four processes, each with one job:
1. outside (this one): forks the next and writes its user namespace's ID maps. Running as
   root, it maps the program's user to `nobody` and drops its supplementary groups, so the
   program is nobody to the host's files even where it could reach them;
2. holder: creates the new namespaces, waits for its maps, forks the init;
3. init, PID 1 of the new PID namespace: builds the file system (`mounts`), starts the
   program and reaps every process until the program ends, then reports how it ended and
   exits, at which the kernel kills whatever the program left running: no process of a run
   outlives it;
4. program: becomes the unprivileged sandbox user, takes on its limits and the system-call
   filter, and execs Python on `main.py` with an almost empty environment.

Each process dies with its parent (PR_SET_PDEATHSIG), so killing this one, as the worker
does at its wall clock, takes the whole tree down. How the program ended, or why the
sandbox could not start, goes to the worker as one JSON line on the status pipe, never on
the program's output, which the program controls.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import signal
from typing import Any, NoReturn

from bot.sandbox import outputs, seccomp
from bot.sandbox.limits import GRACE_SECONDS, SANDBOX_UID, RunPlan
from bot.sandbox.mounts import PROGRAM, SCRATCH, SCRIPT, build_root
from bot.sandbox.syscalls import (
    NAMESPACES,
    PR_CAPBSET_DROP,
    PR_SET_PDEATHSIG,
    prctl,
    sethostname,
    unshare,
)

NOBODY = 65534
SETUP_FAILED = 125
SHELL = "/bin/sh"  # a shell run's interpreter, the system's, bound read-only with /bin
ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "HOME": SCRATCH,
    "MPLBACKEND": "Agg",  # matplotlib draws into files: there is no display
    "MPLCONFIGDIR": "/tmp/matplotlib",  # its caches, in memory and gone with the run
    "XDG_CACHE_HOME": "/tmp/cache",  # fontconfig's, likewise
    "OPENBLAS_NUM_THREADS": "1",  # numpy's one thread, inside the process limit
}


def report(fd: int, **fields: Any) -> None:
    os.write(fd, (json.dumps(fields) + "\n").encode())


def _die_with_parent() -> None:
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the parent was gone before the line above
        os._exit(SETUP_FAILED)


def _limits(plan: RunPlan) -> None:
    limits = plan.limits
    memory = limits.memory_mb * 1024 * 1024
    scratch = limits.scratch_mb * 1024 * 1024
    for kind, value in (
        (resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 1)),
        (resource.RLIMIT_AS, (memory, memory)),
        (resource.RLIMIT_NPROC, (limits.processes, limits.processes)),
        (resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files)),
        (resource.RLIMIT_FSIZE, (scratch, scratch)),
        (resource.RLIMIT_CORE, (0, 0)),
        (resource.RLIMIT_MEMLOCK, (0, 0)),
    ):
        resource.setrlimit(kind, value)


def _drop_bounding_set() -> None:
    """No capability can come back, even through a program with file capabilities."""
    for capability in range(64):
        try:
            prctl(PR_CAPBSET_DROP, capability)
        except OSError:  # past the last capability this kernel knows
            break


def _program(plan: RunPlan) -> NoReturn:
    """The last process: from here on nothing of Parley's runs in it."""
    try:
        os.closerange(3, 1 << 16)
        _drop_bounding_set()
        os.setresgid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)
        os.setresuid(SANDBOX_UID, SANDBOX_UID, SANDBOX_UID)
        _limits(plan)
        os.chdir(SCRATCH)
        seccomp.install()
        if plan.shell:
            os.execve(SHELL, [SHELL, SCRIPT], ENVIRONMENT)
        argv = [plan.python, "-I", "-u", "-B", PROGRAM]
        os.execve(plan.python, argv, ENVIRONMENT)
    except BaseException as exc:
        os.write(2, f"sandbox: the program could not start: {exc}\n".encode())
    os._exit(SETUP_FAILED)


def _reap(program: int) -> tuple[int, resource.struct_rusage]:
    """Reap every process that ends (orphans come to PID 1) until the program does."""
    while True:
        pid, status, usage = os.wait4(-1, 0)
        if pid == program:
            return status, usage


def _init(plan: RunPlan, code: bytes) -> NoReturn:
    status_fd = plan.status_fd
    try:
        _die_with_parent()
        sethostname("sandbox")
        # the host's folder for ./out/, opened before the host's files are out of reach
        out = os.open(plan.out, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC) if plan.out else -1
        build_root(plan, code)
    except Exception as exc:
        report(status_fd, error=f"could not build the sandbox's file system: {exc}")
        os._exit(SETUP_FAILED)

    def out_of_time(signum: int, frame: object) -> None:
        report(status_fd, timeout=True)
        os._exit(SETUP_FAILED)

    signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(math.ceil(plan.limits.timeout + GRACE_SECONDS))
    program = os.fork()
    if program == 0:
        _program(plan)
    status, usage = _reap(program)
    cpu = round(usage.ru_utime + usage.ru_stime, 3)
    left = _take_out(out, outputs.Bound(plan.out_files, plan.out_bytes)).to_json()
    if os.WIFSIGNALED(status):
        report(status_fd, signal=os.WTERMSIG(status), cpu=cpu, **left)
    else:
        report(status_fd, exit=os.waitstatus_to_exitcode(status), cpu=cpu, **left)
    os._exit(0)


def _take_out(out: int, bound: outputs.Bound) -> outputs.Leftovers:
    """End what the program left running, then copy ./out/ to the host within `bound`
    (`outputs`); the files left there."""
    if out < 0:
        return outputs.Leftovers()
    with contextlib.suppress(ProcessLookupError):
        os.kill(-1, signal.SIGKILL)  # as PID 1: every other process of the sandbox
    with contextlib.suppress(ChildProcessError):
        while True:
            os.wait()
    try:
        return outputs.take_out(SCRATCH, out, bound)
    except OSError:
        return outputs.Leftovers()  # a file that could not be copied: the output still counts
    finally:
        os.close(out)


def _holder(plan: RunPlan, code: bytes, ready: int, mapped: int) -> NoReturn:
    try:
        _die_with_parent()
        unshare(NAMESPACES)
    except OSError as exc:
        report(plan.status_fd, error=f"the machine refused new namespaces ({exc.strerror})")
        os._exit(SETUP_FAILED)
    os.write(ready, b".")
    if os.read(mapped, 1) != b".":
        os._exit(SETUP_FAILED)
    init = os.fork()
    if init == 0:
        _init(plan, code)
    _, status = os.waitpid(init, 0)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _write_maps(pid: int) -> None:
    """Map the sandbox user to `nobody` when run as root (root itself stays root inside, for
    the init alone, which needs it to read the Python installation under a private home);
    else to the worker's own user, the only one an unprivileged process may map."""
    if os.geteuid() == 0:
        users = f"0 0 1\n{SANDBOX_UID} {NOBODY} 1\n"
        groups = f"0 0 1\n{SANDBOX_UID} {NOBODY} 1\n"
    else:
        users = f"{SANDBOX_UID} {os.geteuid()} 1\n"
        groups = f"{SANDBOX_UID} {os.getegid()} 1\n"
    for name, text in (("setgroups", "deny"), ("uid_map", users), ("gid_map", groups)):
        with open(f"/proc/{pid}/{name}", "w") as file:
            file.write(text)


def _outside(plan: RunPlan, code: bytes) -> int:
    if os.geteuid() == 0:
        # root's groups would follow the program; root of a user namespace may be denied
        # this, and then has no groups of the host's to pass on anyway
        with contextlib.suppress(PermissionError):
            os.setgroups([])
    ready_r, ready_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    holder = os.fork()
    if holder == 0:
        os.close(ready_r)
        os.close(mapped_w)
        _holder(plan, code, ready_w, mapped_r)
    os.close(ready_w)
    os.close(mapped_r)
    if os.read(ready_r, 1) == b".":
        try:
            _write_maps(holder)
        except OSError as exc:
            report(plan.status_fd, error=f"could not map the sandbox's user ({exc})")
            os.kill(holder, signal.SIGKILL)
        else:
            os.write(mapped_w, b".")
    os.close(mapped_w)
    _, status = os.waitpid(holder, 0)
    return os.waitstatus_to_exitcode(status) & 0xFF


def main(text: str) -> int:
    """Run the plan `text` (a `RunPlan` as JSON). The script came on stdin, which the
    program would inherit: /dev/null takes its place."""
    plan = RunPlan.from_json(text)
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        with open(plan.program, "rb") as file:
            code = file.read()
        return _outside(plan, code)
    except Exception as exc:
        report(plan.status_fd, error=f"the sandbox could not start: {exc}")
        return SETUP_FAILED
