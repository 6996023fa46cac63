"""What a run's events tell the durable record: when text first showed, errors, the end, and
the trace of it all (`bot.trace`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.files.voice import typed
from bot.store.history import RunRecord, SessionInfo
from bot.trace.builder import TraceBuilder
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.state import SessionState


def session_info(head: Envelope) -> SessionInfo:
    """The session as the run's first envelope describes it. A new session is titled by its
    message as the person wrote or said it: what was typed (a voice note's caption), else
    what was heard; never the line that marks a transcript for the model."""
    title = ""
    if head.kind == "message":
        title = (typed(head.text) if head.heard else head.text).strip() or head.heard
    return SessionInfo(head.session, head.platform, head.chat_kind, " ".join(title.split())[:80])


@dataclass
class RunWatch:
    started: float
    first_text: float | None = None
    error: str | None = None
    completed: ev.Completed | None = None
    trace: TraceBuilder = field(default_factory=TraceBuilder)

    @classmethod
    def of(cls, state: SessionState, *, resumed: bool, secrets: Sequence[str] = ()) -> RunWatch:
        """A watch for the run about to start; one that resumes a dead worker's run goes on
        with the trace that run saved in the state, from that run's start. `secrets` are
        kept out of the trace's texts."""
        saved = state.turn.trace if resumed and state.turn is not None else None
        if saved is None or not saved.nodes:
            return cls(started=time.time(), trace=TraceBuilder(secrets=secrets))
        going_on = TraceBuilder.going_on(saved, secrets=secrets)
        return cls(started=saved.nodes[0].started_at, trace=going_on)

    def decided(self, state: SessionState, at: float) -> None:
        """A run a person's decision (made `at`) resumes counts the time they took, from
        when the waiting calls were asked about."""
        pending = state.pending
        if pending is not None and pending.asked_at is not None:
            self.trace.states.waited(at - pending.asked_at)

    def keep(self, state: SessionState) -> None:
        """Put the trace so far in the state about to be saved (see `of`)."""
        if state.turn is not None:
            state.turn.trace = self.trace.trace

    def see(self, event: ev.AgentEvent) -> None:
        self.trace.see(event)
        if isinstance(event, ev.TextDelta) and self.first_text is None:
            self.first_text = time.time()
        elif isinstance(event, ev.Error):
            self.error = event.cause or event.message
        elif isinstance(event, ev.Completed):
            self.completed = event

    def record(
        self, group: Sequence[Envelope], trigger: str, model: str, person: str
    ) -> RunRecord | None:
        """The run's record, or None if it never completed (it was cut short). `person` is
        whom the run was for (who asked, also in a run a decision resumed), whose day its
        tokens count against."""
        done = self.completed
        if done is None:
            return None
        head = group[0]
        return RunRecord(
            where=session_info(head),
            envelope_ids=[envelope.id for envelope in group],
            trigger=trigger,
            sender=person,
            model=done.model or model,  # the model that answered, a fallback if one did
            finish_reason=done.finish_reason,
            iterations=done.iterations,
            usage=done.usage,
            started_at=self.started,
            finished_at=time.time(),
            first_text_at=self.first_text,
            error=self.error,
            trace=self.trace.trace,
            parent_run=head.parent_run,
            config=done.config,
        )
