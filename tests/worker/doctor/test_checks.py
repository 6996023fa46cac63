"""The checks run side by side, each within its deadline: one that never answers, or one
that crashes, is a failed line of its own, and the others report as usual, all within
about one deadline."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from worker.cli import DOCTOR_CHECKS
from worker.doctor.checks import Check, in_thread, run_all
from worker.doctor.report import Finding, ok
from worker.doctor.run import NAMES


async def forever() -> list[Finding]:
    await asyncio.Event().wait()
    return []


async def crashes() -> list[Finding]:
    raise ConnectionResetError("the peer went away")


async def answers() -> list[Finding]:
    return [ok("fine", "answered")]


async def test_a_hung_or_crashed_check_fails_alone_and_nothing_waits_longer() -> None:
    checks = [
        Check("hung", forever, "check the host"),
        Check("also hung", forever, "check the other host"),
        Check("crashes", crashes, "look at it"),
        Check("fine", answers, "never said"),
    ]
    started = time.monotonic()
    found = await run_all(checks, 0.5)
    took = time.monotonic() - started
    assert [(f.check, f.status) for f in found] == [
        ("hung", "failed"), ("also hung", "failed"), ("crashes", "failed"), ("fine", "ok"),
    ]  # fmt: skip
    assert found[0].found == "no answer within 0.5 s" and found[0].fix == "check the host"
    assert found[2].found == "the check failed: ConnectionResetError (the peer went away)"
    assert took < 5, took  # side by side: about one deadline, not one per check


async def test_a_thread_that_never_returns_does_not_hold_the_caller() -> None:
    blocked = threading.Event()
    try:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                await in_thread(blocked.wait)
    finally:
        blocked.set()
    assert await in_thread(lambda: 41 + 1) == 42


def test_the_commands_help_names_the_checks_it_takes() -> None:
    assert DOCTOR_CHECKS == NAMES
