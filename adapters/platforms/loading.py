"""A platform's egress that is still loading: the worker takes work meanwhile.

Importing a platform's SDK costs a worker more than everything else it loads at start
(aiogram's types alone take about 1.6 s), and a worker's start-up is also its recovery time
whenever one is replaced. So the configured platforms' modules are imported in a thread
while the worker already takes jobs: a turn starts, loads its session and calls the model,
and its reply reaches the platform once the SDK is there, usually before the model's first
words are. The event loop keeps running meanwhile (heartbeats, liveness), which an import
on the loop itself would stall for seconds.

A thread shares the interpreter's lock, though: an import begun at start takes half of it
from the turns being set up, whose model requests go out later by as much. So a worker can
hand the load a `begin` event, set once its first turns have sent their model requests
(`worker.platform_start`): the import then runs while the model thinks. Whatever needs the
platform before that begins it at once: a reply closed or a file posted while the load waits
(a command's answer, an error), an expiry or a reminder to show (`ready`). Waiting for the
load without hastening it is `loaded` (the ready announcement).

A turn opened before the egress exists gets a `PendingReply`: its events wait in order and
reach the real reply stream, unchanged, as soon as it is built; a file's post waits for the
real stream's answer, which the turn needs before it goes on. Once the egress is built,
`open` hands out the platform's own streams and nothing stands in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.redis.confirmations import Confirmation
from bot.session.egress import Egress, ReplyStream
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.events import AgentEvent, FileSent

log = logging.getLogger(__name__)


class LoadingEgress:
    """An `Egress` whose module `load` imports, in a thread, from when `begin` is set (at
    once without one); what `load` returns then builds the egress on the loop."""

    def __init__(
        self,
        name: str,
        load: Callable[[], Callable[[], Egress]],
        begin: asyncio.Event | None = None,
    ) -> None:
        self.name = name
        self._wanted = asyncio.Event()  # something is to be shown: begin now
        self._building = asyncio.create_task(self._build(load, begin))

    async def _build(
        self, load: Callable[[], Callable[[], Egress]], begin: asyncio.Event | None
    ) -> Egress:
        if begin is not None:
            await _first_of(begin, self._wanted)
        try:
            build = await asyncio.to_thread(load)
        except Exception:
            log.exception("could not load the %s egress", self.name)
            raise
        return build()  # on the loop: clients made here belong to it

    def want(self) -> None:
        """Begin the load now if it is still waiting to begin."""
        self._wanted.set()

    async def loaded(self) -> Egress:
        """The egress, once built, without hastening its load; waiting does not cancel it."""
        return await asyncio.shield(self._building)

    async def ready(self) -> Egress:
        """The egress, once built, its load begun now if it was still waiting to begin."""
        self.want()
        return await self.loaded()

    def _built(self) -> Egress | None:
        building = self._building
        if building.done() and not building.cancelled() and building.exception() is None:
            return building.result()
        return None

    def open(self, envelopes: Sequence[Envelope], *, fresh: bool = False) -> ReplyStream:
        built = self._built()
        if built is None:
            return PendingReply(self, envelopes, fresh=fresh)
        return built.open(envelopes, fresh=fresh)

    async def expired(self, confirmation: Confirmation) -> None:
        await (await self.ready()).expired(confirmation)

    async def remind(self, confirmation: Confirmation) -> None:
        await (await self.ready()).remind(confirmation)

    async def aclose(self) -> None:
        built = self._built()
        if built is not None:
            await built.aclose()
        else:  # nothing was built; the import thread ends on its own
            self._building.cancel()


@dataclass(frozen=True)
class _Post:
    """A file to post, and the real stream's answer for the turn."""

    event: FileSent
    said: asyncio.Future[str | None]


class PendingReply:
    """A reply stream opened while its egress loads; see the module docstring.

    A failure of the real stream comes out of the next `send` or of `close`, as it would
    have from the stream itself, and the real stream is closed all the same.
    """

    def __init__(
        self, egress: LoadingEgress, envelopes: Sequence[Envelope], *, fresh: bool = False
    ) -> None:
        self._egress = egress
        self._events: asyncio.Queue[AgentEvent | _Post | None] = asyncio.Queue()
        self._abandoned = False
        self._forwarding = asyncio.create_task(self._forward(list(envelopes), fresh))

    async def _forward(self, envelopes: list[Envelope], fresh: bool) -> None:
        stream = (await self._egress.loaded()).open(envelopes, fresh=fresh)
        try:
            while (item := await self._events.get()) is not None:
                if isinstance(item, _Post):
                    item.said.set_result(await stream.post_file(item.event))
                else:
                    await stream.send(item)
        finally:
            await stream.close(abandoned=self._abandoned)

    async def send(self, event: AgentEvent) -> None:
        if self._forwarding.done():
            await self._forwarding  # raises what stopped it
        self._events.put_nowait(event)

    async def post_file(self, event: FileSent) -> str | None:
        """Posted by the real stream after the events before it; its answer, once there."""
        if self._forwarding.done():
            await self._forwarding  # raises what stopped it
        post = _Post(event, asyncio.get_running_loop().create_future())
        self._events.put_nowait(post)
        self._egress.want()  # the turn waits for the platform's answer
        waits: list[asyncio.Future[Any]] = [post.said, self._forwarding]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        if not post.said.done():
            await self._forwarding  # raises what stopped it
        return post.said.result() if post.said.done() else None

    async def settle(self) -> None:
        """Nothing to hurry while the platform loads: the real stream shows each event as it
        takes it, and the answer's last update with what follows it."""

    async def close(self, *, abandoned: bool = False) -> None:
        if abandoned:  # what is still queued is not shown: another worker shows the turn
            self._abandoned = True
            self._forwarding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._forwarding
            return
        self._events.put_nowait(None)
        self._egress.want()  # the turn ends waiting for what it said to be shown
        await self._forwarding


async def _first_of(*events: asyncio.Event) -> None:
    """Until one of `events` is set."""
    waits = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
