"""No tool stalls the event loop: blocking and CPU-bound tools time out while the loop runs."""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from bot.tools.base import ToolContext, ToolRegistry, tool
from bot.tools.builtin import builtin_tools
from bot.tools.executor import ToolExecutor, ToolOutcome
from bot.vocabulary.envelope import Sender
from bot.vocabulary.messages import ToolUseBlock
from tests.support.waiting import until

T = TypeVar("T")
GATES: dict[str, threading.Event] = {}
HOLD = 30.0  # "for ever" for a test: long past every timeout here, short enough to end


@tool
def block_thread(ctx: ToolContext, gate: str) -> str:
    """A plain function that blocks its thread until the test opens the gate."""
    GATES[gate].wait(HOLD)
    return "let go"


@tool
async def block_in_async(ctx: ToolContext, gate: str) -> str:
    """An async tool whose body blocks anyway (a sync call inside)."""
    GATES[gate].wait(HOLD)
    return "let go"


@tool(isolation="process", timeout=1.0)
def hold_the_gil(ctx: ToolContext, pid_file: str) -> str:
    """Backtracks in the regex engine, which keeps the GIL, for far longer than any timeout."""
    Path(pid_file).write_text(str(os.getpid()))
    re.match(r"(a+)+$", "a" * 64 + "b")
    return "matched"


@tool(isolation="process")
def process_id(ctx: ToolContext) -> str:
    """The id of the process running it."""
    return str(os.getpid())


@tool(isolation="process")
def end_process(ctx: ToolContext) -> str:
    """Ends the process running it."""
    os._exit(3)


TOOLS = [*builtin_tools(), block_thread, block_in_async, hold_the_gil, process_id, end_process]


@pytest.fixture
def ctx() -> ToolContext:
    return ToolContext("console:t", Sender(id="console:t"))


@pytest.fixture
def gate() -> Iterator[str]:
    name = f"gate-{len(GATES)}"
    GATES[name] = threading.Event()
    yield name
    GATES[name].set()  # let the abandoned thread end


def make(timeout: float, threads: int = 8) -> ToolExecutor:
    registry = ToolRegistry(TOOLS)
    return ToolExecutor(
        registry, timeout=timeout, concurrency=4, output_limit=10_000, threads=threads
    )


@pytest.fixture
async def executor() -> AsyncIterator[ToolExecutor]:
    built = make(timeout=10.0)
    yield built
    await built.aclose()


def call(name: str, **arguments: object) -> ToolUseBlock:
    return ToolUseBlock(id=f"c-{name}", name=name, input=dict(arguments))


async def ticking(work: Awaitable[T]) -> tuple[T, float]:
    """`work`'s result, and the longest the loop went without running a 10 ms ticker."""
    gaps = [0.0]

    async def tick() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    try:
        result = await work
    finally:
        ticker.cancel()
    return result, max(gaps)


async def run_one(executor: ToolExecutor, ctx: ToolContext, block: ToolUseBlock) -> ToolOutcome:
    (outcome,) = await executor.run_all([block], ctx, {})
    return outcome


@pytest.mark.parametrize("name", ["block_thread", "block_in_async"])
async def test_a_blocking_tool_times_out_while_the_loop_runs(
    ctx: ToolContext, gate: str, name: str
) -> None:
    executor = make(timeout=1.0)
    outcome, gap = await ticking(run_one(executor, ctx, call(name, gate=gate)))
    print(f"\n{name}: timed out after {outcome.duration:.2f} s; loop's longest pause {gap:.3f} s")
    assert outcome.is_error
    assert outcome.content == f"{name} timed out after 1 s and was stopped."
    assert outcome.duration < 5  # the tool holds its thread for 30 s
    assert gap < 1.0


async def test_stuck_threads_are_bounded_then_calls_are_busy(ctx: ToolContext, gate: str) -> None:
    executor = make(timeout=0.3, threads=1)
    first = await run_one(executor, ctx, call("block_thread", gate=gate))
    assert first.content == "block_thread timed out after 0.3 s and was stopped."
    assert executor.runner.threads.alive == 1  # abandoned, still counted
    second = await run_one(executor, ctx, call("block_in_async", gate=gate))
    assert second.is_error and second.content.startswith(
        "block_in_async not run: all 1 tool threads of this worker are busy"
    )
    assert second.duration < 5
    GATES[gate].set()
    await until(lambda: executor.runner.threads.alive == 0, "the let-go thread ended")
    third = await run_one(executor, ctx, call("block_thread", gate=gate))
    assert (third.content, third.is_error) == ("let go", False)


async def test_an_async_tool_that_awaits_is_cancelled_on_its_own_loop(ctx: ToolContext) -> None:
    @tool
    async def sleeper(ctx: ToolContext) -> str:
        """Sleeps cooperatively."""
        await asyncio.sleep(HOLD)
        return "woke"

    executor = make(timeout=1.0)
    executor.registry.register(sleeper)
    outcome = await run_one(executor, ctx, call("sleeper"))
    assert outcome.content == "sleeper timed out after 1 s and was stopped."
    await until(lambda: executor.runner.threads.alive == 0, "the cancelled tool's thread ended")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.e2e  # starts the tools' helper processes
async def test_a_tool_holding_the_gil_is_killed_at_the_timeout(
    executor: ToolExecutor, ctx: ToolContext, tmp_path: Path
) -> None:
    await executor.warm()
    before = await run_one(executor, ctx, call("process_id"))
    pid_file = tmp_path / "pid"
    outcome, gap = await ticking(
        run_one(executor, ctx, call("hold_the_gil", pid_file=str(pid_file)))
    )
    print(
        f"\nGIL held in a helper: timed out after {outcome.duration:.2f} s; "
        f"the loop's longest pause {gap:.3f} s"
    )
    assert outcome.content == "hold_the_gil timed out after 1 s and was stopped."
    assert outcome.duration < 5 and gap < 1.0
    hog = int(pid_file.read_text())
    assert str(hog) == before.content  # the warm helper ran it
    await until(lambda: not alive(hog), "the GIL-holding helper gone")
    after = await run_one(executor, ctx, call("process_id"))
    assert not after.is_error and after.content != before.content  # a fresh helper


@pytest.mark.e2e  # starts the tools' helper processes
async def test_a_helper_that_dies_is_a_clear_error_and_is_replaced(
    executor: ToolExecutor, ctx: ToolContext
) -> None:
    died = await run_one(executor, ctx, call("end_process"))
    assert (died.content, died.is_error) == (
        "end_process failed: its process ended unexpectedly",
        True,
    )
    after = await run_one(executor, ctx, call("process_id"))
    assert not after.is_error and after.content.isdigit()


@pytest.mark.e2e  # starts the tools' helper processes
async def test_helpers_are_reused_and_fast_once_warm(
    executor: ToolExecutor, ctx: ToolContext
) -> None:
    started = time.monotonic()
    await executor.warm()
    warmed = time.monotonic() - started
    timings, pids = [], set()
    for _ in range(20):
        outcome = await run_one(executor, ctx, call("process_id"))
        timings.append(outcome.duration)
        pids.add(outcome.content)
    print(
        f"\nhelper started in {warmed:.2f} s; a call then takes "
        f"{sorted(timings)[10] * 1000:.1f} ms (median of 20)"
    )
    assert len(pids) == 1


@pytest.mark.e2e  # starts the tools' helper processes
async def test_a_call_made_while_the_helper_warms_up_waits_for_it(
    executor: ToolExecutor, ctx: ToolContext
) -> None:
    """A worker warms its helper when it starts; a message that arrives meanwhile is served by
    that helper, not by a second one started cold beside it."""
    warming = asyncio.create_task(executor.warm())
    await asyncio.sleep(0)  # the warm-up has started its helper
    first = await run_one(executor, ctx, call("process_id"))
    await warming
    again = await run_one(executor, ctx, call("process_id"))
    assert not first.is_error and first.content == again.content
    assert len(executor.runner.processes.idle) == 1


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("round(1, -10**1000)", "round's digits must be a whole number from -4300 to 4300"),
        ("round(1, -2**22)", "round's digits must be a whole number from -4300 to 4300"),
        ("10**4299*99", "result too large (over 4300 digits)"),
    ],
)
@pytest.mark.e2e  # starts the tools' helper processes
async def test_the_calculator_answers_runaway_expressions_with_an_error(
    executor: ToolExecutor,
    ctx: ToolContext,
    expression: str,
    message: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    outcome, gap = await ticking(run_one(executor, ctx, call("calculator", expression=expression)))
    assert outcome.is_error
    assert outcome.content == f"Cannot evaluate {expression!r}: {message}"
    assert outcome.duration < 5 and gap < 1.0
    assert not caplog.records  # a clear error for the model, not a logged traceback
