"""A quiet check-in's reply, held until its run ends: posted whole when the model had
something to say, not at all when its whole answer is `NOTHING_TO_REPORT`.

Replies stream as they come, so whether a check-in has anything to say is known only at its
end: its events wait here, and the platform's stream is opened only when they are to be
shown, so nothing at all (not even a placeholder) reaches the chat of a check-in with
nothing to report. A run that asks for a decision or posts a file shows all it held at once
and streams on: the person must see what waits for them. The run is recorded either way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from bot.tasks.model import NOTHING_TO_REPORT
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope

if TYPE_CHECKING:  # the egress opens these streams, so it imports this module
    from bot.session.egress import ReplyStream


def is_quiet(envelopes: Sequence[Envelope]) -> bool:
    """Whether `envelopes` make a quiet check-in's scheduled run."""
    return bool(envelopes) and envelopes[0].kind == "scheduled" and envelopes[0].quiet


def nothing_to_report(events: Sequence[ev.AgentEvent]) -> bool:
    """Whether the run's whole answer is the marker: the final answer where the run says it,
    else the text streamed since the last reset."""
    said = ""
    for event in events:
        if isinstance(event, ev.TextReset):
            said = ""
        elif isinstance(event, ev.TextDelta):
            said += event.text
        elif isinstance(event, ev.Completed) and event.text:
            said = event.text
    return said.strip().strip(".").strip() == NOTHING_TO_REPORT


class QuietStream:
    """A `ReplyStream` that holds a check-in's events until its end (see the module doc);
    `opening` opens the platform's stream, once, when there is something to show."""

    def __init__(self, opening: Callable[[], ReplyStream]) -> None:
        self._opening = opening
        self._held: list[ev.AgentEvent] = []
        self._stream: ReplyStream | None = None

    async def send(self, event: ev.AgentEvent) -> None:
        if self._stream is not None:
            await self._stream.send(event)
            return
        self._held.append(event)
        if isinstance(event, ev.ConfirmationRequired):  # a decision waits for the person
            await self._show()

    async def post_file(self, event: ev.FileSent) -> str | None:
        """A file is something to say: what was held is shown, then the file."""
        stream = await self._show()
        return await stream.post_file(event)

    async def settle(self) -> None:
        """Nothing held is shown before the run ends; what is shown already lands."""
        if self._stream is not None:
            await self._stream.settle()

    async def close(self, *, abandoned: bool = False) -> None:
        """The run ended: show it all unless it had nothing to report. An abandoned run is
        carried on elsewhere, which holds its reply again."""
        if self._stream is None and not abandoned and not nothing_to_report(self._held):
            await self._show()
        if self._stream is not None:
            await self._stream.close(abandoned=abandoned)

    async def _show(self) -> ReplyStream:
        """Open the platform's stream and send it what was held; from now on it streams."""
        if self._stream is None:
            self._stream = self._opening()
            held, self._held = self._held, []
            for event in held:
                await self._stream.send(event)
        return self._stream
