"""A run's numbers in its JSON answer (`POST /api/agent/run`), read from the run's record, so
that they are the numbers `GET /api/traces/{id}` shows.

The worker writes a run's record (its trace, and the metrics measured from it) just after the
run's last event, the one that ends the answer's wait, and the run's latency ends when the
record is made. The web process sees the run's events later than the worker's trace builder
did, some of them not at all (the model calls' ends), so numbers computed here from the events
would come close to the trace's without being them. The answer waits for the record instead:
one lookup by the run's id (a primary key), first after FIRST_LOOK_S, then at doubling
intervals, RECORD_WAIT_S in all. The worker writes within milliseconds of the last event, so
an answer costs a lookup or two and a few milliseconds. A record not written in time (the
database is away: the worker logs it and goes on) leaves the answer's `metrics` null; the
trace has them once it is written.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from bot.store.traces import Traced, Traces

FIRST_LOOK_S = 0.005
LONGEST_PAUSE_S = 0.25
RECORD_WAIT_S = 3.0

log = logging.getLogger(__name__)


def answer_metrics(found: Traced) -> dict[str, Any] | None:
    """The trace's metrics (`bot.trace.metrics.RunMetrics`), with the run's `latency_ms` and
    `first_text_ms` (null when it wrote no text) and `tool_calls`, its tool calls in all;
    None for a run recorded without a trace."""
    if found.trace is None or not isinstance(kept := found.trace.get("metrics"), dict):
        return None
    usage = kept.get("tool_usage") or {}
    return {
        **kept,
        "latency_ms": found.run["latency_ms"],
        "first_text_ms": found.run["first_text_ms"],
        "tool_calls": sum(usage.values()),
    }


async def recorded_metrics(
    traces: Traces, run_id: str, wait: float = RECORD_WAIT_S
) -> dict[str, Any] | None:
    """The metrics of run `run_id` once its record is written; None after `wait` s, or when
    the database cannot be read (the run's answer is whole without them)."""
    deadline = time.monotonic() + wait
    pause = FIRST_LOOK_S
    while True:
        await asyncio.sleep(pause)
        try:
            found = await traces.of_run(run_id)
        except Exception as exc:  # the database is away: the answer goes without them
            log.warning("could not read the record of run %s: %s", run_id, exc)
            return None
        if found is not None:
            return answer_metrics(found)
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        pause = min(pause * 2, LONGEST_PAUSE_S, left)  # the last look at the deadline
