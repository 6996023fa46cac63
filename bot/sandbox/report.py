"""How a run ended, in words the model can act on: the verdict first, then the output.

The verdict goes first so that it survives when the output is cut again later (the tool
executor's own limit); a limit that ended the program is named as such, since "killed by
signal 24" would tell the model nothing about what to change. So are the files of ./out/
that were not sent, by name, with why: past the files a run sends, or past the bytes its
turn may still be handed.
"""

from __future__ import annotations

import signal

from bot.sandbox.limits import SandboxLimits
from bot.sandbox.outputs import MAX_FILES, Unsent
from bot.sandbox.runner import Outcome
from bot.vocabulary.files import size

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
    return lines + unsent(outcome, limits)


def unsent(outcome: Outcome, limits: SandboxLimits) -> list[str]:
    """What the files of ./out/ that were not sent were, and why, a line per reason."""
    lines: list[str] = []
    bound = outcome.bound
    if past := [u.name for u in outcome.unsent if u.why == "count"]:
        most = f"at most {MAX_FILES} are"
        if bound.files < MAX_FILES:
            most = f"this turn may send {bound.files or 'no'} more"
        lines.append(f"{_more(len(past))} not sent: {most} ({', '.join(past)})")
    if large := [u for u in outcome.unsent if u.why == "room"]:
        lines.append(
            f"not sent, past the {limits.scratch_mb} MB the files of ./out/ may add up to in "
            f"one turn ({size(bound.bytes)} were left for this run): {_sized(large)}"
        )
    if outcome.unlisted:
        lines.append(f"{_more(outcome.unlisted)} not sent either")
    return lines


def _more(count: int) -> str:
    return "1 more file in ./out/ was" if count == 1 else f"{count} more files in ./out/ were"


def _sized(files: list[Unsent]) -> str:
    return ", ".join(f"{file.name} ({size(file.size)})" for file in files)


def describe(outcome: Outcome, limits: SandboxLimits) -> str:
    head = "\n".join(verdict(outcome, limits))
    body = outcome.output if outcome.output.strip() else "(no output)"
    return f"{head}\n--- output (stdout and stderr) ---\n{body}"
