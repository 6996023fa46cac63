"""A run's progress, shown while it runs (`bot.redis.live_runs`): its status, the state it is
in, its trace so far and the numbers measured from it, in the shape `GET /api/traces/{id}`
gives a recorded run, so a client that polls a run's trace reads the same answer before and
after its end.

It is written once the run has run half a second, then rewritten as it enters a state that may
last (`changed`), a few times a step, never per token.
Showing it never fails or stops a turn: a Redis that cannot take it is logged, and the
run goes on.
"""

from __future__ import annotations

import asyncio
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
SHOW_AFTER_S = 0.5  # a run is shown once it has run this long


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


@dataclass
class RunProgress:
    live: LiveRuns | None  # None: not shown (tools and tests without Redis)
    run_id: str
    head: Envelope
    trigger: str
    model: str
    state: SessionState
    watch: RunWatch
    _where: str = ""  # the state the run is in, as last changed
    _shown: bool = False  # the run's key was written
    _later: asyncio.TimerHandle | None = None  # the first showing, once the run is old enough
    _showing: asyncio.Task[None] | None = None

    async def changed(self, change: ev.StateChanged) -> None:
        """Shown as the run starts a state that may last: a model call, its stream, its
        tools, a plan or a compaction (the turn's other states pass within milliseconds into
        one of those, or end the run). A run is first shown once it has run SHOW_AFTER_S,
        so a short turn, whose record is written before anyone could poll it, writes
        nothing."""
        if change.layer != "call" and change.state not in LASTING:
            return
        self._where = change.state
        age = time.time() - self.watch.started
        if self._shown or age >= SHOW_AFTER_S:
            await self.show()
        elif self._later is None and self.live is not None:
            loop = asyncio.get_running_loop()
            self._later = loop.call_later(SHOW_AFTER_S - age, self._first_showing)

    def _first_showing(self) -> None:
        self._showing = asyncio.create_task(self.show())

    async def show(self) -> None:
        """The run is in the state it last changed to."""
        if self.live is None:
            return
        self._shown = True
        try:
            await self.live.show(self.run_id, self.head.session, self.shown(self._where))
        except Exception as exc:  # Redis away: the trace is shown once the run is recorded
            log.warning("could not show the progress of run %s: %s", self.run_id, exc)

    def halt(self) -> None:
        """The run's events ended: it is not shown for the first time after that."""
        if self._later is not None:
            self._later.cancel()

    async def drop(self) -> None:
        """The run is recorded (or will not be): its record answers from now on. An API
        run's was shown queued by the web process, whatever this worker wrote."""
        self.halt()
        if self._showing is not None:
            await asyncio.wait([self._showing])  # never written after it is dropped
        if self.live is None or not (self._shown or self.head.run is not None):
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
