"""Runs written to the record the way a worker writes them (`History.record`), with a trace
built from the events a run would emit: for the tests and benchmarks of the runs' lists,
charts and dashboard, which need many runs of many kinds without running each one."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.store.history import History
from bot.trace.builder import TraceBuilder
from bot.vocabulary import events as ev
from bot.vocabulary.ran_with import PromptParts, RanWith, short_hash
from bot.vocabulary.run_config import Mode
from bot.vocabulary.runs import RunRecord, SessionInfo
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage


@dataclass(frozen=True)
class Seed:
    """One run: where, by whom and what, how it ended, when and how long it took, and what
    it ran with (None: as a run recorded before runs kept it)."""

    session: str = "http:seed"
    platform: str = "http"
    title: str = "a seeded conversation"
    envelope: str = "m1"
    trigger: str = "message"
    model: str = "claude-test"
    finish: str = "end_turn"
    error: str | None = None
    started_at: float = field(default_factory=time.time)
    latency_s: float = 1.0
    tools: Sequence[str] = ()
    retries: int = 0
    config: RanWith | None = None
    iterations: int = 2
    states: dict[str, int] | None = None  # ms per state; None: what the trace's events say


def ran_with(
    model: str = "claude-test",
    mode: Mode = "react",
    tools: Sequence[str] = ("calculator",),
    instructions: str = "",
) -> RanWith:
    """A configuration as a run keeps it, hashed from what it names: two with other tools
    have other tool sets, two with other instructions other prompts."""
    names = tuple(sorted(tools))
    return RanWith(
        model=model,
        mode=mode,
        tools=names,
        tools_hash=short_hash(names),
        timeout=60.0,
        token_budget=5000,
        max_steps=8,
        reasoning="off",
        temperature=0.3,
        retry_attempts=2,
        prompt=PromptParts.of("AGENTS.md as read", "no skills", instructions),
    )


def traced(seed: Seed) -> TraceBuilder:
    """The trace of `seed`: a model call, its tool calls, its retries, then the answer's
    model call (or the error that ended the run), spread over the run's time."""
    moments = iter(
        seed.started_at + seed.latency_s * n / (len(seed.tools) + seed.retries + 4)
        for n in range(len(seed.tools) + seed.retries + 4)
    )
    builder = TraceBuilder(clock=lambda: next(moments, seed.started_at + seed.latency_s))
    builder.see(ev.Iteration(number=1))
    for n, name in enumerate(seed.tools):
        builder.see(ev.ToolCallStart(call_id=f"c{n}", name=name, arguments={"n": n}))
        builder.see(ev.ToolCallResult(call_id=f"c{n}", name=name, content="done"))
    builder.see(ev.Iteration(number=2))
    for attempt in range(seed.retries):
        builder.see(ev.Retrying(attempt=attempt + 1, delay=0.1, error="overloaded"))
    if seed.error is not None:
        builder.see(ev.Error(message=seed.error))
    usage = Usage(input_tokens=100, output_tokens=20)
    builder.see(ev.Completed(finish_reason=seed.finish, iterations=seed.iterations, usage=usage))
    if seed.states is not None:
        builder.trace.states = dict(seed.states)
    return builder


def record_of(seed: Seed) -> RunRecord:
    return RunRecord(
        where=SessionInfo(seed.session, seed.platform, "private", seed.title),
        envelope_ids=[seed.envelope],
        trigger=seed.trigger,
        sender=f"{seed.platform}:seed",
        model=seed.model,
        finish_reason=seed.finish,
        iterations=seed.iterations,
        usage=Usage(input_tokens=100, output_tokens=20),
        started_at=seed.started_at,
        finished_at=seed.started_at + seed.latency_s,
        error=seed.error,
        trace=traced(seed).trace,
        config=seed.config,
    )


async def record(history: History, *seeds: Seed) -> list[str]:
    """Write each seed's run; their ids, in the same order."""
    ids = []
    for seed in seeds:
        run = record_of(seed)
        await history.record(SessionState(), run)
        ids.append(run.id)
    return ids
