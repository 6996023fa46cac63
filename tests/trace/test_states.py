"""Where a run's time went, counted from the states the agent loop passes through: calling
the model, streaming its text, running tools, waiting for a person and the rest."""

from __future__ import annotations

from bot.trace.builder import TraceBuilder
from bot.trace.metrics import measure
from bot.vocabulary import events as ev
from bot.vocabulary.trace import STATES
from bot.vocabulary.usage import Usage


def call(state: ev.CallState) -> ev.StateChanged:
    return ev.StateChanged(layer="call", state=state)


def turn(state: ev.TurnState) -> ev.StateChanged:
    return ev.StateChanged(layer="turn", state=state)


def test_each_state_is_timed_from_its_start_to_the_next_change() -> None:
    now = [100.0]
    builder = TraceBuilder(clock=lambda: now[0])
    steps: list[tuple[float, ev.AgentEvent]] = [
        (0.0, turn(ev.TurnState.INIT)),  # the loop's own work: other
        (0.1, ev.Iteration(number=1)),
        (0.0, call(ev.CallState.CALLING)),
        (0.8, ev.ModelAnswered(model="m", usage=Usage(1, 1))),  # no text: all of it calling
        (0.05, turn(ev.TurnState.EXECUTING)),
        (0.0, call(ev.CallState.TOOL_EXECUTING)),
        (2.0, turn(ev.TurnState.OBSERVING)),
        (0.05, ev.Iteration(number=2)),
        (0.0, call(ev.CallState.CALLING)),
        (0.3, call(ev.CallState.RETRYING)),  # waiting for the model still
        (0.2, call(ev.CallState.STREAMING)),
        (1.5, ev.ModelAnswered(model="m", usage=Usage(1, 1))),
        (0.1, turn(ev.TurnState.COMPLETED)),
        (0.5, ev.Completed(finish_reason="end_turn", iterations=2, usage=Usage(2, 2))),
    ]
    for pause, event in steps:
        now[0] += pause
        builder.see(event)
    assert builder.trace.states == {"other": 300, "calling": 1300, "tools": 2000, "streaming": 1500}
    metrics = measure(builder.trace, latency_ms=5600, tokens=4)
    assert list(metrics.states) == list(STATES)  # every state, those not passed through at 0
    assert metrics.states["person"] == 0


def test_a_trace_going_on_after_a_restart_keeps_counting_on_its_own_states() -> None:
    now = [0.0]
    first = TraceBuilder(clock=lambda: now[0])
    first.see(ev.Iteration(number=1))
    first.see(call(ev.CallState.CALLING))
    now[0] = 1.0
    first.see(ev.ModelAnswered(model="m", usage=Usage(1, 1)))
    saved = first.trace.model_copy(deep=True)  # as the worker saved it, then died

    later = TraceBuilder.going_on(saved, clock=lambda: now[0])
    later.see(call(ev.CallState.TOOL_EXECUTING))
    now[0] = 4.0
    later.see(ev.Completed(finish_reason="end_turn", iterations=1, usage=Usage(1, 1)))
    assert later.trace.states == {"calling": 1000, "tools": 3000}
    assert saved.states == {"calling": 1000}  # the saved one is a copy, not counted on
