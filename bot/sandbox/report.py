"""How a run ended, in words the model can act on: the verdict first, then the output.

The verdict goes first so that it survives when the output is cut again later (the tool
executor's own limit); a limit that ended the program is named as such, since "killed by
signal 24" would tell the model nothing about what to change.
"""

from __future__ import annotations

import signal

from bot.sandbox.limits import SandboxLimits
from bot.sandbox.outputs import MAX_FILES
from bot.sandbox.runner import Outcome

MEMORY_ERRORS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _out_of_memory(outcome: Outcome) -> bool:
    tail = outcome.output.strip().splitlines()[-3:]
    return any(marker in line for line in tail for marker in MEMORY_ERRORS)


def verdict(outcome: Outcome, limits: SandboxLimits) -> list[str]:
    """One line per fact: how the program ended, then each limit it reached."""
    lines: list[str] = []
    cpu_limit = f"killed: CPU time limit ({limits.cpu_seconds} s)"
    if outcome.timed_out:
        lines.append(f"killed: wall-clock limit ({limits.timeout:g} s)")
    elif outcome.signal == signal.SIGXCPU or (
        outcome.signal == signal.SIGKILL and (outcome.cpu_seconds or 0) >= limits.cpu_seconds
    ):
        lines.append(cpu_limit)
    elif outcome.signal is not None:
        lines.append(f"killed by {_signal_name(outcome.signal)}")
    elif outcome.exit_code is not None:
        lines.append(f"exit code: {outcome.exit_code}")
    if outcome.exit_code and _out_of_memory(outcome):
        lines.append(f"stopped: memory limit ({limits.memory_mb} MB)")
    if outcome.cut:
        lines.append(
            f"output cut at {limits.output_limit:,} characters; the program was stopped there"
        )
    if outcome.left:
        lines.append(f"{outcome.left} more files in ./out/ were not sent: at most {MAX_FILES} are")
    return lines


def describe(outcome: Outcome, limits: SandboxLimits) -> str:
    head = "\n".join(verdict(outcome, limits))
    body = outcome.output if outcome.output.strip() else "(no output)"
    return f"{head}\n--- output (stdout and stderr) ---\n{body}"
