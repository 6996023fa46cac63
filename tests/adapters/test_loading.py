"""A platform's egress that loads in a thread: turns opened meanwhile lose nothing."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pytest

from adapters.platforms.loading import LoadingEgress, PendingReply
from bot.redis.confirmations import Confirmation
from bot.session.egress import Egress
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope, Sender
from bot.vocabulary.files import FileRef


@dataclass
class Recorded:
    """A reply stream that keeps what it was sent; `fail_on` makes one event fail."""

    envelopes: list[Envelope]
    events: list[ev.AgentEvent] = field(default_factory=list)
    closed: bool = False
    abandoned: bool = False
    fail_on: int | None = None

    async def send(self, event: ev.AgentEvent) -> None:
        if len(self.events) == self.fail_on:
            raise ConnectionError("the platform is away")
        self.events.append(event)

    async def post_file(self, event: ev.FileSent) -> str | None:
        await self.send(event)
        return f"refused {event.file.name}"

    async def settle(self) -> None:
        return None

    async def close(self, *, abandoned: bool = False) -> None:
        self.closed, self.abandoned = True, abandoned


@dataclass
class RecordingEgress:
    streams: list[Recorded] = field(default_factory=list)
    expired_ids: list[str] = field(default_factory=list)
    closed: bool = False
    fail_on: int | None = None

    def open(self, envelopes: Sequence[Envelope], *, fresh: bool = False) -> Recorded:
        self.streams.append(Recorded(list(envelopes), fail_on=self.fail_on))
        return self.streams[-1]

    async def expired(self, confirmation: Confirmation) -> None:
        self.expired_ids.append(confirmation.id)

    async def remind(self, confirmation: Confirmation) -> None:
        self.expired_ids.append(f"remind:{confirmation.id}")

    async def aclose(self) -> None:
        self.closed = True


def gated(egress: Egress) -> tuple[threading.Event, Callable[[], Callable[[], Egress]]]:
    """A load (run in a thread, like an import) that ends when the event is set."""
    gate = threading.Event()

    def load() -> Callable[[], Egress]:
        if not gate.wait(30):
            raise TimeoutError("the test never let the load finish")
        return lambda: egress

    return gate, load


EXPIRED = Confirmation(
    id="c1", session="tg:1", envelope_id="m1", requester="tg:1", calls=[], expires_at=0
)
ENVELOPE = Envelope(id="m1", session="tg:1", text="hi", sender=Sender(id="tg:1"))
EVENTS: list[ev.AgentEvent] = [
    ev.StateChanged(layer="turn", state=ev.TurnState.INIT),
    ev.TextDelta(text="Hello"),
    ev.TextDelta(text=", world"),
]


async def test_a_turn_opened_while_loading_reaches_the_platform_in_order() -> None:
    real = RecordingEgress()
    gate, load = gated(real)
    egress = LoadingEgress("telegram", load)
    stream = egress.open([ENVELOPE])
    assert isinstance(stream, PendingReply)
    for event in EVENTS[:2]:
        await stream.send(event)  # does not wait for the load
    assert real.streams == []
    gate.set()
    await egress.ready()
    await stream.send(EVENTS[2])
    await stream.close()
    assert [s.envelopes for s in real.streams] == [[ENVELOPE]]
    assert real.streams[0].events == EVENTS and real.streams[0].closed
    assert egress.open([ENVELOPE]) is real.streams[1]  # loaded: nothing in between any more
    await egress.aclose()
    assert real.closed


async def test_a_turn_abandoned_while_loading_shows_nothing() -> None:
    """Its worker lost the session (or stops): what was queued for the platform is dropped,
    since the worker that carries the turn on shows it."""
    real = RecordingEgress()
    gate, load = gated(real)
    egress = LoadingEgress("telegram", load)
    before, after = egress.open([ENVELOPE]), egress.open([ENVELOPE])
    for event in EVENTS:
        await before.send(event)
    await before.close(abandoned=True)
    gate.set()
    await egress.ready()
    await asyncio.wait_for(after.close(abandoned=True), 30)
    assert real.streams == [] or all(s.abandoned and not s.events for s in real.streams)


async def test_a_failing_platform_fails_the_turn_and_its_stream_is_closed() -> None:
    real = RecordingEgress(fail_on=1)
    gate, load = gated(real)
    egress = LoadingEgress("telegram", load)
    stream = egress.open([ENVELOPE])
    for event in EVENTS:
        await stream.send(event)
    gate.set()
    with pytest.raises(ConnectionError):
        await stream.close()
    assert real.streams[0].events == EVENTS[:1] and real.streams[0].closed
    with pytest.raises(ConnectionError):
        await stream.send(EVENTS[0])


async def test_an_expired_prompt_waits_for_the_load() -> None:
    real = RecordingEgress()
    gate, load = gated(real)
    egress = LoadingEgress("telegram", load)
    settling = asyncio.create_task(egress.expired(EXPIRED))
    await asyncio.sleep(0)
    assert not settling.done()
    gate.set()
    await asyncio.wait_for(settling, 30)
    assert real.expired_ids == ["c1"]


async def test_a_worker_stopping_while_loading_closes_cleanly() -> None:
    """The import thread cannot be stopped; what it returns after the worker stopped must
    build nothing, or a client would be left open behind the closed worker."""
    real = RecordingEgress()
    loading, gate, returned = threading.Event(), threading.Event(), threading.Event()
    built: list[Egress] = []

    def build() -> Egress:
        built.append(real)
        return real

    def load() -> Callable[[], Egress]:
        loading.set()
        gate.wait(30)
        returned.set()
        return build

    egress = LoadingEgress("telegram", load)
    assert await asyncio.to_thread(loading.wait, 30), "the import thread never began"
    await egress.aclose()
    gate.set()
    assert await asyncio.to_thread(returned.wait, 30), "the import thread never ended"
    # A round trip through a thread of our own: the loop has by now run what the import
    # thread's end set going, the build included, had it not been called off.
    await asyncio.to_thread(lambda: None)
    assert built == [] or real.closed


async def test_a_platform_that_cannot_load_fails_its_turns_not_the_worker() -> None:
    def load() -> Callable[[], Egress]:
        raise ImportError("no module named aiogram")

    egress = LoadingEgress("telegram", load)
    stream = egress.open([ENVELOPE])
    await stream.send(EVENTS[0])
    with pytest.raises(ImportError):
        await stream.close()
    with pytest.raises(ImportError):
        await egress.open([ENVELOPE]).close()  # still a pending reply, failing the same way
    await egress.aclose()


async def test_a_file_posted_while_loading_waits_for_the_platforms_answer() -> None:
    """The turn goes on only once the real stream posted the file, after the events before
    it, and is told what the platform said of it."""
    real = RecordingEgress()
    gate, load = gated(real)
    egress = LoadingEgress("telegram", load)
    stream = egress.open([ENVELOPE])
    await stream.send(EVENTS[0])
    ref = FileRef(sha256="0" * 64, media_type="text/csv", name="t.csv", size=3)
    posting = asyncio.create_task(stream.post_file(ev.FileSent(call_id="c", file=ref)))
    await asyncio.sleep(0.05)
    assert not posting.done()
    gate.set()
    assert await asyncio.wait_for(posting, 30) == "refused t.csv"
    await stream.close()
    assert [type(e).__name__ for e in real.streams[0].events] == ["StateChanged", "FileSent"]


def counted(egress: Egress) -> tuple[threading.Event, Callable[[], Callable[[], Egress]]]:
    """A load that says when it began (in its thread), and ends at once."""
    began = threading.Event()

    def load() -> Callable[[], Egress]:
        began.set()
        return lambda: egress

    return began, load


async def settled() -> None:
    """Long enough for a load begun meanwhile to have reached its thread."""
    for _ in range(3):
        await asyncio.to_thread(lambda: None)


async def test_a_load_given_a_begin_waits_for_it_and_a_turn_meanwhile_loses_nothing() -> None:
    """A worker begins its platforms' import once its first model requests are out
    (`worker.platform_start`): a turn's first events wait for it, unshown, and lose nothing."""
    real = RecordingEgress()
    began, load = counted(real)
    begin = asyncio.Event()
    egress = LoadingEgress("telegram", load, begin)
    stream = egress.open([ENVELOPE])
    for event in EVENTS:
        await stream.send(event)
    await settled()
    assert not began.is_set() and real.streams == []
    begin.set()
    await asyncio.wait_for(egress.loaded(), 30)
    await stream.close()
    assert began.is_set()
    assert real.streams[0].events == EVENTS and real.streams[0].closed
    await egress.aclose()


async def test_the_ready_announcement_waits_for_the_load_without_beginning_it() -> None:
    real = RecordingEgress()
    began, load = counted(real)
    begin = asyncio.Event()
    egress = LoadingEgress("telegram", load, begin)
    announcing = asyncio.create_task(egress.loaded())
    await settled()
    assert not began.is_set() and not announcing.done()
    begin.set()
    assert await asyncio.wait_for(announcing, 30) is real
    await egress.aclose()


async def test_a_reply_that_ends_before_the_begin_begins_the_load() -> None:
    """A command's answer, or an error said before any model call: the turn ends waiting for
    it to be shown, so the platform is loaded then, without waiting for the worker's word."""
    real = RecordingEgress()
    _, load = counted(real)
    egress = LoadingEgress("telegram", load, asyncio.Event())  # never set here
    stream = egress.open([ENVELOPE])
    await stream.send(ev.TextDelta(text="Commands: /help, /stop"))
    await asyncio.wait_for(stream.close(), 30)
    assert real.streams[0].events == [ev.TextDelta(text="Commands: /help, /stop")]
    await egress.aclose()


async def test_a_file_or_an_expiry_before_the_begin_begins_the_load() -> None:
    real = RecordingEgress()
    _, load = counted(real)
    egress = LoadingEgress("telegram", load, asyncio.Event())  # never set here
    ref = FileRef(sha256="0" * 64, media_type="text/csv", name="t.csv", size=3)
    posted = egress.open([ENVELOPE]).post_file(ev.FileSent(call_id="c", file=ref))
    assert await asyncio.wait_for(posted, 30) == "refused t.csv"
    other = LoadingEgress("telegram", counted(real)[1], asyncio.Event())
    await asyncio.wait_for(other.expired(EXPIRED), 30)
    assert real.expired_ids == ["c1"]
    await egress.aclose()
    await other.aclose()
