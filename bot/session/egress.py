"""How a worker answers: each platform adapter provides reply streams for its envelopes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from bot.redis.confirmations import Confirmation
from bot.session import quiet
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.events import AgentEvent, FileSent


class ReplyStream(Protocol):
    """Turns one turn's events into what the platform shows (a message edited in place,
    an HTTP event stream...). It must tolerate a turn that restarts after a `reset` event."""

    async def send(self, event: AgentEvent) -> None:
        """Show `event`. `ModelAnswered` comes too, for what a stream does when the model's
        answer is whole (a chat's pump holds its updates); it is nothing to show."""
        ...

    async def post_file(self, event: FileSent) -> str | None:
        """Post a file a tool made, after what was shown so far (as `send` would), and say
        what became of it, for the model: "" when it is where the person sees it (posted
        now, or earlier in the turn), why not when it is not (the platform refused it), or
        None when this stream only hands it on and cannot know."""
        ...

    async def settle(self) -> None:
        """The answer is whole: let what was shown so far land now, without closing, while
        the turn makes what follows it (its voice note, `bot.session.voice`)."""
        ...

    async def close(self, *, abandoned: bool = False) -> None:
        """The turn is over: show its last state. `abandoned`: the turn was stopped because
        this worker no longer has it (its lease was lost, or it is shutting down and hands
        the session over); show nothing more, since whoever carries the turn on shows it."""
        ...


class Egress(Protocol):
    def open(self, envelopes: Sequence[Envelope], *, fresh: bool = False) -> ReplyStream:
        """A stream answering `envelopes` (the first, plus plain messages merged into it).
        `fresh`: their turn is taken up for the first time (not resumed after a crash), so
        nothing was posted for this reply yet, and a platform need not look."""
        ...

    async def expired(self, confirmation: Confirmation) -> None:
        """A confirmation ended without a press (it expired): update what the person sees."""
        ...

    async def remind(self, confirmation: Confirmation) -> None:
        """A confirmation still waits, a while before it expires: remind its person, once
        (the caller made sure only it sends this)."""
        ...

    async def aclose(self) -> None:
        """Release connections when the worker stops."""
        ...


class PlatformEgress:
    """The egress of each platform, chosen by the envelope's `platform`.

    One worker answers every platform, so the composition root registers each adapter's
    egress here; a platform nobody registered falls back to `default`. A quiet check-in's
    reply is held until its run ends, whatever its platform (`bot.session.quiet`).
    """

    def __init__(self, default: Egress, by_platform: Mapping[str, Egress]) -> None:
        self.default = default
        self.by_platform = dict(by_platform)

    def _for(self, platform: str) -> Egress:
        return self.by_platform.get(platform, self.default)

    def open(self, envelopes: Sequence[Envelope], *, fresh: bool = False) -> ReplyStream:
        egress = self._for(envelopes[0].platform)
        if quiet.is_quiet(envelopes):
            return quiet.QuietStream(lambda: egress.open(envelopes, fresh=fresh))
        return egress.open(envelopes, fresh=fresh)

    async def expired(self, confirmation: Confirmation) -> None:
        await self._for(confirmation.prompt_platform).expired(confirmation)

    async def remind(self, confirmation: Confirmation) -> None:
        await self._for(confirmation.prompt_platform).remind(confirmation)

    async def aclose(self) -> None:
        for egress in {id(e): e for e in [self.default, *self.by_platform.values()]}.values():
            await egress.aclose()
