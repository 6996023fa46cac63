"""How a worker answers: each platform adapter provides reply streams for its envelopes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from bot.agent.events import AgentEvent
from bot.envelope import Envelope


class ReplyStream(Protocol):
    """Turns one turn's events into what the platform shows (a message edited in place,
    an HTTP event stream...). It must tolerate a turn that restarts after a `reset` event."""

    async def send(self, event: AgentEvent) -> None: ...

    async def close(self) -> None: ...


class Egress(Protocol):
    def open(self, envelopes: Sequence[Envelope]) -> ReplyStream:
        """A stream answering `envelopes` (the first, plus plain messages merged into it)."""
        ...
