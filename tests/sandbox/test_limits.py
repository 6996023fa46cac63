"""The sandbox's limits hold against programs that try to exceed them."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from bot.config.settings import Settings
from bot.sandbox import runner
from bot.sandbox.limits import RunPlan, SandboxLimits
from bot.sandbox.report import describe
from bot.sandbox.runner import run_program
from tests.support.waiting import until

pytestmark = pytest.mark.e2e


async def test_an_endless_loop_is_stopped_with_the_default_settings() -> None:
    limits = SandboxLimits.from_settings(Settings())
    started = time.monotonic()
    outcome = await run_program("while True:\n    pass\n", limits)
    text = describe(outcome, limits)
    # CPU time runs out first unless the machine is so busy that the wall clock does
    assert text.startswith(("killed: CPU time limit (10 s)", "killed: wall-clock limit (20 s)"))
    assert outcome.exit_code is None
    assert outcome.cpu_seconds is None or outcome.cpu_seconds <= limits.cpu_seconds + 1.5
    assert time.monotonic() - started < limits.timeout + 10


async def test_cpu_time_is_limited(limits: SandboxLimits) -> None:
    limits = replace(limits, cpu_seconds=2)
    code = "print('started', flush=True)\nwhile True:\n    pass\n"
    outcome = await run_program(code, limits)
    assert outcome.signal == signal.SIGXCPU
    assert outcome.cpu_seconds is not None and 1.5 <= outcome.cpu_seconds <= 3.5
    assert describe(outcome, limits) == (
        "killed: CPU time limit (2 s)\n--- output (stdout and stderr) ---\nstarted\n"
    )


async def test_the_wall_clock_kills_a_sleeping_program(limits: SandboxLimits) -> None:
    limits = replace(limits, timeout=3.0)
    code = "import time\nprint('before', flush=True)\ntime.sleep(600)\nprint('after')\n"
    started = time.monotonic()
    outcome = await run_program(code, limits)
    assert time.monotonic() - started < 30
    assert outcome.timed_out and outcome.output == "before\n"
    assert describe(outcome, limits).startswith("killed: wall-clock limit (3 s)\n")


async def test_memory_is_limited(limits: SandboxLimits) -> None:
    code = "chunks = []\nwhile True:\n    chunks.append(bytearray(16 * 1024 * 1024))\n"
    outcome = await run_program(code, limits)
    assert outcome.exit_code == 1
    assert outcome.output.rstrip().endswith("MemoryError")
    assert describe(outcome, limits).startswith("exit code: 1\nstopped: memory limit (512 MB)\n")


def _processes_in(namespace: str) -> list[int]:
    """Host processes whose PID namespace is `namespace` (as /proc/PID/ns/pid reads)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "ns" / "pid") == namespace:
                    found.append(int(entry.name))
            except OSError:  # ended meanwhile
                continue
    return found


async def test_a_fork_bomb_fails_inside_and_leaves_nothing_behind(
    limits: SandboxLimits,
) -> None:
    code = (
        "import os\n"
        "print(os.readlink('/proc/self/ns/pid'), flush=True)\n"
        "while True:\n"
        "    os.fork()\n"
    )
    outcome = await run_program(code, limits)
    namespace = outcome.output.splitlines()[0]
    assert namespace.startswith("pid:[")
    assert namespace != os.readlink("/proc/self/ns/pid")
    assert "BlockingIOError" in outcome.output  # fork refused inside: the process limit
    assert _processes_in(namespace) == []
    assert _host_can_fork()


def _host_can_fork() -> bool:
    if subprocess.run(["true"], check=False).returncode != 0:
        return False
    child = os.fork()
    if child == 0:
        os._exit(7)
    return os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 7


async def test_huge_output_is_cut_and_the_program_stopped(limits: SandboxLimits) -> None:
    limits = replace(limits, output_limit=5000)
    code = "import sys\nwhile True:\n    sys.stdout.write('é' * 10000)\n"
    started = time.monotonic()
    outcome = await run_program(code, limits)
    assert outcome.cut and outcome.output == "é" * 5000
    assert time.monotonic() - started < 30  # stopped at the limit, not at the wall clock
    assert describe(outcome, limits).startswith(
        "output cut at 5,000 characters; the program was stopped there\n"
    )


async def test_a_big_file_is_refused(limits: SandboxLimits) -> None:
    code = (
        "try:\n"
        "    with open('big', 'wb') as f:\n"
        "        for _ in range(200):\n"
        "            f.write(b'x' * 1024 * 1024)\n"
        "except OSError as exc:\n"
        "    print('refused', exc.errno)\n"
    )
    outcome = await run_program(code, limits)
    # the working directory holds 64 MB (ENOSPC); a single file stops there too (EFBIG)
    assert outcome.exit_code == 0
    assert outcome.output.startswith("refused"), outcome.output


def _in_session(session: int) -> list[int]:
    """Host processes of the session the stage started (all of a run's, unless one left)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == session and fields[0] != "Z":  # a zombie is only a record
                found.append(int(entry.name))
    return found


async def test_a_cancelled_run_takes_its_processes_down(
    limits: SandboxLimits, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The executor cancels a call at its timeout: nothing of the run may outlive that."""
    started: list[asyncio.subprocess.Process] = []
    spawn = runner._spawn

    async def recorded(plan: RunPlan) -> asyncio.subprocess.Process:
        process = await spawn(plan)
        started.append(process)
        return process

    monkeypatch.setattr(runner, "_spawn", recorded)
    code = "import os, time\nfor _ in range(5):\n    os.fork()\ntime.sleep(600)\n"
    task = asyncio.create_task(run_program(code, limits))

    def running() -> int:
        return len(_in_session(started[0].pid)) if started else 0

    await until(lambda: running() >= 32 + 3, "32 program processes and the stage's three")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert started[0].returncode is not None
    # SIGKILL is sent; dying takes the kernel a moment
    await until(lambda: running() == 0, "every process of the run gone", every=0.01)
