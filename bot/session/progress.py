"""A run's progress, shown while it runs (`bot.redis.live_runs`): its status, the state it is
in, its trace so far and the numbers measured from it, in the shape `GET /api/traces/{id}`
gives a recorded run, so a client that polls a run's trace reads the same answer before and
after its end.

It is rewritten as the run enters a state that may last (`changed`), a few times a step, never
per token.
Showing it never fails or stops a turn: a Redis that cannot take it is logged, and the
run goes on.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.redis.live_runs import LiveRuns
from bot.session.watch import RunWatch
from bot.trace.metrics import measure
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.state import SessionState

log = logging.getLogger(__name__)

LASTING = (ev.TurnState.PLANNING, ev.TurnState.COMPACTING)  # turn states shown (`changed`)


def _at(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat()


def _base(run_id: str, head: Envelope, trigger: str, model: str) -> dict[str, Any]:
    return {
        "id": run_id, "session": head.session, "title": "", "platform": head.platform,
        "trigger": trigger, "model": model, "finish_reason": None, "finished_at": None,
    }  # fmt: skip


def queued(run_id: str, head: Envelope, trigger: str, model: str) -> dict[str, Any]:
    """A run whose message waits in its session's inbox, as shown until a worker takes it."""
    run = {**_base(run_id, head, trigger, model), "status": "queued", "state": None,
           "iterations": 0, "started_at": None, "latency_ms": None, "first_text_ms": None,
           "tokens": {"input": 0, "output": 0}}  # fmt: skip
    return {"run": run, "config": None, "nodes": [], "edges": [], "dropped": 0, "states": {},
            "output": None, "metrics": None}  # fmt: skip


@dataclass(frozen=True)
class RunProgress:
    live: LiveRuns | None  # None: not shown (tools and tests without Redis)
    run_id: str
    head: Envelope
    trigger: str
    model: str
    state: SessionState
    watch: RunWatch

    async def changed(self, change: ev.StateChanged) -> None:
        """Shown as the run starts a state that may last: a model call, its stream, its
        tools, a plan or a compaction. The turn's other states pass within a few
        milliseconds into one of those (a tool batch starting, a call's results read) or end
        the run, whose record answers next, so a short turn is written twice, not six times."""
        if change.layer == "call" or change.state in LASTING:
            await self.show(change.state)

    async def show(self, where: str) -> None:
        """The run is in state `where` (`bot.vocabulary.events`' turn and call states)."""
        if self.live is None:
            return
        try:
            await self.live.show(self.run_id, self.head.session, self.shown(where))
        except Exception as exc:  # Redis away: the trace is shown once the run is recorded
            log.warning("could not show the progress of run %s: %s", self.run_id, exc)

    async def drop(self) -> None:
        """The run is recorded (or will not be): its record answers from now on."""
        if self.live is None:
            return
        try:
            await self.live.drop(self.run_id, self.head.session)
        except Exception as exc:  # it lapses by itself
            log.warning("could not drop the progress of run %s: %s", self.run_id, exc)

    def shown(self, where: str) -> dict[str, Any]:
        now, watch, turn = time.time(), self.watch, self.state.turn
        trace = watch.trace.trace
        latency = round((now - watch.started) * 1000)
        usage = turn.usage if turn is not None else None
        tokens = {"input": usage.input_tokens if usage else 0,
                  "output": usage.output_tokens if usage else 0}  # fmt: skip
        first = watch.first_text
        run = {
            **_base(self.run_id, self.head, self.trigger, self.model),
            "status": "running", "state": where,
            "iterations": turn.iteration if turn is not None else 0,
            "started_at": _at(watch.started), "latency_ms": latency,
            "first_text_ms": None if first is None else round((first - watch.started) * 1000),
            "tokens": tokens,
        }  # fmt: skip
        metrics = measure(trace, latency_ms=latency, tokens=tokens["input"] + tokens["output"])
        return {
            "run": run, "config": None, **trace.model_dump(mode="json"),
            "metrics": metrics.model_dump(),
        }  # fmt: skip
