"""How many helpers one turn starts (PARLEY_HELPERS_PER_TURN), its `delegate` calls counted
in its saved progress.

One reply of the model may hold any number of `delegate` calls, each a run of its own with
its own model calls, tokens and time; only identical calls are stopped as a loop. So a turn
lets through at most so many, over all its model calls and its plan's steps (which take
from the same count, `bot.agent.plan`), and every call past them gets a result that says so
without running. A call counts once it is let through (to run, or to wait for its approval),
by its id: a turn resumed after an approval or a crash, whose saved progress keeps the ids,
lets the same call through again (the same id finds the same helper, `bot.session.helpers`)
without counting it twice, and keeps the count for the calls that follow.
"""

from __future__ import annotations

from bot.vocabulary.state import TurnProgress


def let_through(turn: TurnProgress, call_id: str, most: int) -> bool:
    """Whether the `delegate` call `call_id` may start its helper, counting it if so."""
    if call_id in turn.helpers:
        return True
    if len(turn.helpers) >= most:
        return False
    turn.helpers.append(call_id)
    return True


def room(turn: TurnProgress, most: int) -> int:
    """How many more helpers the turn may start."""
    return max(0, most - len(turn.helpers))


def refusal(most: int) -> str:
    """What the model reads for a call past the bound: one sentence."""
    return (
        f"Not run: a turn starts at most {most} helpers and this one has started them all, "
        "so this helper did not run; do this part yourself."
    )
