"""Where a run's time went, read from the states the agent loop passes through
(`StateChanged`): the milliseconds in each of `bot.vocabulary.trace.STATES`, kept on the trace
as they are counted, so a trace saved mid-run (and read while the run goes on) has them too.

The loop says when a model call starts (`calling`), when its text starts to stream
(`streaming`) and when its tools run (`tool_executing`); a call's end (`ModelAnswered`) and
the loop's own turn states are `other`. A run a decision resumed starts with the time its
person took (`waited`), which passed before the run did.
"""

from __future__ import annotations

from bot.vocabulary import events as ev
from bot.vocabulary.trace import Trace

CALL_STATES = {
    ev.CallState.CALLING: "calling",
    ev.CallState.RETRYING: "calling",
    ev.CallState.STREAMING: "streaming",
    ev.CallState.TOOL_EXECUTING: "tools",
}
ENDED = (ev.TurnState.COMPLETED, ev.TurnState.FAILED)


class StateClock:
    """Adds the time since the last change to the state the run was in, on `trace`."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._state: str | None = None
        self._since = 0.0

    def waited(self, seconds: float) -> None:
        """The time a person took to decide, before this run started."""
        self._add("person", seconds)

    def see(self, event: ev.AgentEvent, now: float) -> None:
        if isinstance(event, ev.StateChanged):
            if event.layer == "call":
                self._enter(CALL_STATES.get(ev.CallState(event.state), "other"), now)
            else:
                self._enter(None if event.state in ENDED else "other", now)
        elif isinstance(event, ev.ModelAnswered):
            self._enter("other", now)
        elif isinstance(event, ev.Completed):
            self._enter(None, now)

    def _enter(self, state: str | None, now: float) -> None:
        if self._state is not None:
            self._add(self._state, now - self._since)
        self._state, self._since = state, now

    def _add(self, state: str, seconds: float) -> None:
        states = self.trace.states
        states[state] = states.get(state, 0) + max(0, round(seconds * 1000))
