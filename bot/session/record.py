"""What a turn leaves in the durable record: its run, its tokens against the person's day
(and a scheduled run's against its task's, `bot.tasks.spend`), its metrics. The reply was
given either way, so a write that fails is logged, never raised: the database may be away,
and the turn must still be committed."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any, Protocol

from bot.agent.deps import TurnRequest
from bot.people.limits import Limits
from bot.store.history import History
from bot.store.outcome import UNANSWERED, status_of
from bot.store.sqlite_file import DatabaseFileGone
from bot.tasks.spend import TaskSpend
from bot.telemetry import metrics
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope, task_of_run
from bot.vocabulary.helpers import is_helper
from bot.vocabulary.runs import RunRecord
from bot.vocabulary.state import SessionState

log = logging.getLogger(__name__)


async def quietly(what: str, subject: Any, write: Callable[[Any], Awaitable[None]]) -> None:
    """A write to the record that must not fail the turn."""
    try:
        await write(subject)
    except DatabaseFileGone as exc:  # logged as an error once, where it was noticed
        log.warning("could not %s %s: %s", what, getattr(subject, "id", subject), exc)
    except Exception:
        log.exception("could not %s %s", what, getattr(subject, "id", subject))


class RunExport(Protocol):
    """Where ended runs go besides the record: OpenTelemetry spans (`worker.otel`). It must
    return at once (the spans go out in the background) and is never allowed to fail a turn."""

    def export(self, record: RunRecord, outcome: str, failed: bool) -> None:
        """`outcome`: the run's status in the record; `failed`: it ended without its answer."""
        ...


@dataclass(frozen=True)
class Recorder:
    history: History
    limits: Limits | None
    tools: Collection[str]  # the registered tool names, the only ones metrics label
    models: Collection[str] = ()  # the models the settings name, the only ones metrics label
    exports: RunExport | None = None  # None: the run goes to the record alone

    async def record(self, state: SessionState, record: RunRecord) -> None:
        """A run the database missed waits in `state.unrecorded`, and the next record writes
        it with the messages since `state.recorded`. Its tokens count against the person's
        day, once per turn."""
        self._export(record)
        await quietly("record run", record, lambda r: self.history.record(state, r))
        # A helper's tokens are its parent's (`delegate` adds them up): counted there, once.
        counted = not is_helper(record.where.session) and record.trigger != ev.Trigger.REPLAY
        if (
            self.limits is not None and counted
        ):  # a helper's count in its parent's, a replay in nobody's
            await quietly("count the tokens of", record, self.limits.charge_turn)
            if record.envelope_ids and task_of_run(record.envelope_ids[0]) is not None:
                spend = TaskSpend(self.limits.redis)  # the same Redis as the person's day
                await quietly("count the task's tokens of", record, spend.charge_run)

    def _export(self, record: RunRecord) -> None:
        if self.exports is None:
            return
        status = status_of(record.finish_reason)
        try:
            self.exports.export(record, status, status in UNANSWERED)
        except Exception:  # a bug in the export must not cost the turn its record
            log.exception("could not export run %s", record.id)

    async def finished(self, state: SessionState, record: RunRecord) -> None:
        """A run that completed: counted in the metrics, then recorded."""
        metrics.observe_run(record, self.tools, self.models)
        await self.record(state, record)


def trigger(head: Envelope, request: TurnRequest) -> ev.Trigger:
    """What started the run, as the record and the metrics name it."""
    if head.replay_of is not None:  # begun, or resumed after a worker died
        return ev.Trigger.REPLAY
    if is_helper(head.session) and request.text is not None:
        return ev.Trigger.HELPER
    if head.kind == "scheduled" and request.text is not None:
        return ev.Trigger.SCHEDULED
    if head.run is not None and request.text is not None:
        return ev.Trigger.API
    if request.text is not None:
        return ev.Trigger.MESSAGE
    if request.decisions is None:
        return ev.Trigger.RESUME
    if head.kind == "expiry":  # nobody decided: not a person's decision
        return ev.Trigger.EXPIRY
    return ev.Trigger.DECISION
