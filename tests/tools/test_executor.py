"""The executor turns every failure into a result the model can read, never an exception."""

from __future__ import annotations

import asyncio
import time

import pytest

from bot.tools.base import ToolContext, ToolError, ToolRegistry, tool
from bot.tools.builtin import builtin_tools
from bot.tools.executor import ToolExecutor
from bot.vocabulary.envelope import Sender
from bot.vocabulary.messages import ToolUseBlock

CALLS: list[str] = []


@tool(read_only=True)
async def lookup(ctx: ToolContext, key: str) -> str:
    """Look a key up (counts its calls)."""
    CALLS.append(key)
    return f"value of {key}"


@tool(timeout=0.2)
async def slow(ctx: ToolContext, seconds: float) -> str:
    """Sleep for a while."""
    await asyncio.sleep(seconds)
    return "done"


@tool
async def crash(ctx: ToolContext) -> str:
    """Always fails."""
    raise RuntimeError("disk on fire")


@tool
async def refuse(ctx: ToolContext) -> str:
    """Fails with a message for the model."""
    raise ToolError("quota exhausted, try tomorrow")


@tool
async def huge(ctx: ToolContext) -> str:
    """Returns a lot."""
    return "x" * 50_000


@pytest.fixture
def executor() -> ToolExecutor:
    registry = ToolRegistry([*builtin_tools(), lookup, slow, crash, refuse, huge])
    return ToolExecutor(registry, timeout=5, concurrency=4, output_limit=1000)


@pytest.fixture
def ctx() -> ToolContext:
    return ToolContext("console:t", Sender(id="console:t"))


def call(name: str, **arguments: object) -> ToolUseBlock:
    return ToolUseBlock(id=f"c-{name}-{len(arguments)}", name=name, input=dict(arguments))


async def test_bad_calls_become_error_results(executor: ToolExecutor, ctx: ToolContext) -> None:
    bad_json = ToolUseBlock(
        id="j", name="calculator", raw_input='{"expression": ', input_error="not valid JSON"
    )
    outcomes = await executor.run_all(
        [
            call("nope"),
            bad_json,
            call("calculator"),
            call("calculator", expression="1", extra=True),
            call("crash"),
            call("refuse"),
        ],
        ctx,
        {},
    )
    texts = [o.content for o in outcomes]
    assert all(o.is_error for o in outcomes)
    assert texts[0].startswith("Unknown tool 'nope'. Available tools: calculator, crash")
    assert texts[1] == "Invalid arguments for calculator: not valid JSON"
    assert texts[2] == "Invalid arguments for calculator: expression: Field required"
    assert "extra: Extra inputs are not permitted" in texts[3]
    assert texts[4] == "crash failed: RuntimeError: disk on fire"
    assert texts[5] == "quota exhausted, try tomorrow"


async def test_timeout_stops_the_tool(executor: ToolExecutor, ctx: ToolContext) -> None:
    started = time.monotonic()
    (outcome,) = await executor.run_all([call("slow", seconds=30)], ctx, {})
    assert outcome.is_error and outcome.content == "slow timed out after 0.2 s and was stopped."
    assert time.monotonic() - started < 5


async def test_huge_output_is_truncated_with_a_note(
    executor: ToolExecutor, ctx: ToolContext
) -> None:
    (outcome,) = await executor.run_all([call("huge")], ctx, {})
    assert outcome.content.startswith("x" * 1000 + "\n[output truncated: 50,000 characters")
    assert len(outcome.content) < 1100


RUNNING: list[int] = [0, 0]  # now, most at once


@tool
async def counted(ctx: ToolContext, n: int) -> str:
    """Counts how many of its calls run at the same time."""
    RUNNING[0] += 1
    RUNNING[1] = max(RUNNING[1], RUNNING[0])
    await asyncio.sleep(0.05)
    RUNNING[0] -= 1
    return str(n)


async def test_calls_run_in_parallel_under_the_limit(ctx: ToolContext) -> None:
    executor = ToolExecutor(ToolRegistry([counted]), timeout=5, concurrency=3, output_limit=100)
    calls = [ToolUseBlock(id=str(i), name="counted", input={"n": i}) for i in range(8)]
    RUNNING[:] = [0, 0]
    outcomes = await executor.run_all(calls, ctx, {})
    assert [o.content for o in outcomes] == [str(i) for i in range(8)]  # in the calls' order
    assert RUNNING[1] == 3  # parallel, and never more than the limit


async def test_read_only_results_are_cached_per_turn(
    executor: ToolExecutor, ctx: ToolContext
) -> None:
    CALLS.clear()
    cache: dict[str, str] = {}
    first = await executor.run_all([call("lookup", key="a")], ctx, cache)
    second = await executor.run_all([call("lookup", key="a"), call("lookup", key="b")], ctx, cache)
    assert CALLS == ["a", "b"]
    assert not first[0].cached and second[0].cached and not second[1].cached
    assert second[0].content == "value of a"
    await executor.run_all([call("lookup", key="a")], ctx, {})  # a new turn: a new cache
    assert CALLS == ["a", "b", "a"]
