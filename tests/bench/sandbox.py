"""What the sandbox adds to a `run_python` call: the time from the call to `print(1)`'s result.

Each run builds everything afresh (namespaces, the file system view, the filter) and starts
two interpreters: the stage's (the virtualenv's, which imports libseccomp) and the program's.
The same `print(1)` run directly by the program's interpreter is printed beside it, so the
difference is the sandbox's own cost. "Plot this CSV" is timed too: a bar chart drawn with
matplotlib into ./out/ and handed back (matplotlib's import and its font cache, made afresh
in every run, are most of it). A `shell` call is timed the same way, `echo 1` with a small
workspace copied in (twenty files), beside `/bin/sh -c 'echo 1'` run bare. Its cost over that
bare process holds the stage's interpreter, which `run_python`'s figure over a bare Python
leaves out (the bare run starts one too), so the target compares whole calls: a shell call
costs no more than a `run_python` call. Wall-clock figures on a shared machine swing with
its load. Run with `make bench`, or `python -m tests.bench.sandbox [N]`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bot.config.settings import Settings
from bot.sandbox.limits import SandboxLimits
from bot.sandbox.probe import unavailable
from bot.sandbox.runner import interpreter, run_program
from tests.bench.table import Figure, report, samples
from tests.support.programs import PLOT

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else samples(10, 2)
# No FIGURES: where the sandbox cannot work (no user namespaces), nothing is measured.


def _ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    return (
        f"median {statistics.median(ordered) * 1000:.0f} ms, "
        f"min {ordered[0] * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms"
    )


async def _sandboxed(limits: SandboxLimits) -> float:
    started = time.perf_counter()
    outcome = await run_program("print(1)\n", limits)
    elapsed = time.perf_counter() - started
    assert outcome.exit_code == 0 and outcome.output == "1\n", outcome
    return elapsed


async def _chart(limits: SandboxLimits) -> float:
    started = time.perf_counter()
    outcome = await run_program(PLOT, limits)
    elapsed = time.perf_counter() - started
    assert outcome.exit_code == 0 and [f.name for f in outcome.files] == ["chart.png"], outcome
    return elapsed


async def _shell(limits: SandboxLimits, workspace: str) -> float:
    started = time.perf_counter()
    outcome = await run_program("echo 1\n", limits, shell=True, workspace=workspace)
    elapsed = time.perf_counter() - started
    assert outcome.exit_code == 0 and outcome.output == "1\n", outcome
    return elapsed


def _notes(workspace: str) -> None:
    """A session's notes and reports: twenty small files."""
    for n in range(20):
        Path(workspace, f"note-{n}.txt").write_text("a line of notes\n" * 50)


async def _bare_shell() -> float:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        "/bin/sh", "-c", "echo 1", stdout=asyncio.subprocess.PIPE
    )
    output, _ = await process.communicate()
    elapsed = time.perf_counter() - started
    assert output == b"1\n"
    return elapsed


async def _direct() -> float:
    python, _ = interpreter()
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        python, "-I", "-u", "-B", "-c", "print(1)", stdout=asyncio.subprocess.PIPE
    )
    output, _ = await process.communicate()
    elapsed = time.perf_counter() - started
    assert output == b"1\n"
    return elapsed


async def main() -> None:
    started = time.perf_counter()
    reason = unavailable()
    probe = time.perf_counter() - started
    if reason is not None:
        print(f"the sandbox does not work here: {reason}")
        return
    limits = SandboxLimits.from_settings(Settings(_env_file=None))
    await _sandboxed(limits)  # warm-up: the file cache, compiled bytecode of the stage
    sandboxed = [await _sandboxed(limits) for _ in range(RUNS)]
    direct = [await _direct() for _ in range(RUNS)]
    charts = [await _chart(limits) for _ in range(RUNS)]
    with tempfile.TemporaryDirectory() as workspace:
        await asyncio.to_thread(_notes, workspace)
        await _shell(limits, workspace)
        shells = [await _shell(limits, workspace) for _ in range(RUNS)]
    bare_shells = [await _bare_shell() for _ in range(RUNS)]
    print(f"run_python sandbox, print(1), {RUNS} runs:")
    print(f"  in the sandbox:        {_ms(sandboxed)}")
    print(f"  same interpreter bare: {_ms(direct)}")
    print(f"  a matplotlib chart:    {_ms(charts)}")
    print(f"  shell, echo 1:         {_ms(shells)}")
    print(f"  sh -c 'echo 1' bare:   {_ms(bare_shells)}")
    print(f"  probe at start-up:     {probe * 1000:.0f} ms (once per process)")
    added = (statistics.median(sandboxed) - statistics.median(direct)) * 1000
    shell_added = (statistics.median(shells) - statistics.median(bare_shells)) * 1000
    report(
        Figure(
            "shell echo 1 in the sandbox: median",
            statistics.median(shells) * 1000,
            "ms",
            statistics.median(sandboxed) * 1000,
        ),
        Figure("shell's cost over a bare sh: median", shell_added, "ms"),
        Figure(
            "run_python print(1) in the sandbox: median", statistics.median(sandboxed) * 1000, "ms"
        ),
        Figure("sandbox's own cost over a bare interpreter: median", added, "ms"),
        Figure(
            "run_python drawing a chart into ./out/: median", statistics.median(charts) * 1000, "ms"
        ),
    )


if __name__ == "__main__":
    asyncio.run(main())
