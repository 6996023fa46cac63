"""A run's numbers, read from its trace, and its reliability score.

The score, from 0 to 100, rounded:

    100 × success rate                              (steps that succeeded / steps that ended,
                                                     a stopped step counting neither way)
    − 5 per retry                                   (a model call made again)
    − 10 per schema violation                       (an answer that failed its output schema)
    − 20 × min(1, max(0, latency − 30 s) / 120 s)   (nothing up to 30 s, all 20 by 150 s)
    − 50 if the run ended without its answer        (failed, stopped, timed out, out of steps,
                                                     looped or given up: its status says which)

clamped to 0–100. A run that failed outright (its last step an error) scores its success
rate at most; one that only answered scores 100. A run whose every step went well can still
have failed the person (it looped until stopped, or ran out of time): its steps cannot say
so, its ending does. The weights put failures first, since a wrong or missing answer costs a
person most, then retries (each one a wait and a cost), then slowness, which the person
notices but which still ends in an answer.

Beside the score, `compliance` is that of the run's last answer checked against its output
schema (its last `validation` node, 0 to 100: `bot.vocabulary.compliance`), None for a run
without a schema: how close the answer the run ended with came, where the score counts how
often it missed; and `states`, the milliseconds the run spent in each state (calling the
model, streaming its text, running tools, waiting for a person, other).
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from bot.vocabulary.trace import STATES, Trace

STEPS = ("model_call", "tool_call")
TIMED = STATES[:-1]  # the states the record keeps apart; `other` is the rest of the latency
RETRY_PENALTY = 5
VIOLATION_PENALTY = 10
LATENCY_FREE_MS = 30_000
LATENCY_FULL_MS = 150_000
LATENCY_PENALTY = 20
UNANSWERED_PENALTY = 50


class RunMetrics(BaseModel):
    steps: int = 0
    succeeded: int = 0
    failed: int = 0
    retries: int = 0
    total_latency_ms: int = 0
    average_latency_ms: int = 0
    schema_violations: int = 0
    tool_usage: dict[str, int] = Field(default_factory=dict)
    tokens: int = 0
    reliability: int = 100
    compliance: int | None = None  # the last validation's; None: no output schema
    states: dict[str, int] = Field(default_factory=dict)  # ms per state (`bot.trace.states`)


def measure(trace: Trace, *, latency_ms: int, tokens: int, answered: bool = True) -> RunMetrics:
    """The run's numbers; `answered` is False for a run that ended without its answer."""
    steps = [node for node in trace.nodes if node.kind in STEPS]
    violations = sum(node.kind == "validation" and node.status == "error" for node in trace.nodes)
    succeeded = sum(node.status in ("ok", "waiting") for node in steps)
    failed = sum(node.status == "error" for node in steps)
    retries = sum(node.kind == "retry" for node in trace.nodes)
    total = sum(node.latency_ms for node in steps)
    tools = Counter(node.name for node in steps if node.kind == "tool_call")
    return RunMetrics(
        steps=len(steps),
        succeeded=succeeded,
        failed=failed,
        retries=retries,
        total_latency_ms=total,
        average_latency_ms=round(total / len(steps)) if steps else 0,
        schema_violations=violations,
        tool_usage=dict(tools),
        tokens=tokens,
        reliability=score(succeeded, failed, retries, violations, latency_ms, answered=answered),
        compliance=last_compliance(trace),
        states={state: trace.states.get(state, 0) for state in STATES},
    )


def last_compliance(trace: Trace) -> int | None:
    """The compliance score of the last answer checked against the run's output schema."""
    for node in reversed(trace.nodes):
        if node.kind == "validation":
            found = node.detail.get("compliance")
            return found if isinstance(found, int) else None
    return None


def score(
    succeeded: int,
    failed: int,
    retries: int,
    violations: int,
    latency_ms: int,
    *,
    answered: bool = True,
) -> int:
    ended = succeeded + failed
    rate = succeeded / ended if ended else 1.0
    slow = min(1.0, max(0, latency_ms - LATENCY_FREE_MS) / (LATENCY_FULL_MS - LATENCY_FREE_MS))
    value = (
        100 * rate
        - RETRY_PENALTY * retries
        - VIOLATION_PENALTY * violations
        - LATENCY_PENALTY * slow
        - (0 if answered else UNANSWERED_PENALTY)
    )
    return round(min(100.0, max(0.0, value)))
