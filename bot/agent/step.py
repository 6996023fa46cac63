"""How the parts of a turn report back to the loop: by what they yield, never by attributes.

A step is an async generator of the events the outside world sees; the last item it yields
is a `StepEnd` that says whether the turn stops there. The loop passes the events on and
reads the end, so the whole turn reads top to bottom in `bot.agent.loop`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from bot.vocabulary import events as ev


@dataclass(frozen=True)
class StepEnd:
    """`finish`: why the turn stops here (None: it goes on). `notice`: a closing line from
    Parley itself to show and keep in the context, such as why it stopped a tool loop."""

    finish: ev.FinishReason | str | None = None
    notice: str = ""


Step = AsyncIterator[ev.AgentEvent | StepEnd]
