"""The streamed reply every chat platform shares, on a real Redis, through a platform of notes.

`Notes` is the smallest platform there is: numbered messages of `LIMIT` characters that can be
posted, edited and deleted. It implements only what a platform must (a `Wire` for its calls,
a `Surface` for its limits and pace), so these tests show what the shared pump, pacing and
message ids guarantee by themselves, whatever the platform.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest
from redis.asyncio import Redis

from adapters.chat.pacing import PacedCalls, Slot
from adapters.chat.replies import ReplyStore
from adapters.chat.reply_messages import Edit, Messages
from adapters.chat.reply_stream import NotPosted, QuietSurface, StreamedReply, seal_above
from adapters.chat.transcript import Transcript
from bot.redis.ratelimit import RateBudget, Scope
from bot.vocabulary import events as ev
from bot.vocabulary.files import FileRef
from bot.vocabulary.usage import Usage
from tests.support.waiting import until

LIMIT = 40
RATE = 2.0  # updates a second: a pace of half a second


class RateLimited(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"slow down for {seconds} s")
        self.seconds = seconds


class Notes:
    """The platform's side: what it shows, and every call made to it, timed."""

    def __init__(self) -> None:
        self.shown: dict[int, str] = {}
        self.calls: list[tuple[str, float]] = []
        self.refuse = 0  # the next calls answered with a rate limit
        self._ids = itertools.count(1)

    async def answer(self, method: str, change: Callable[[], int]) -> int:
        self.calls.append((method, time.monotonic()))
        if self.refuse:
            self.refuse -= 1
            raise RateLimited(0.1)
        return change()

    def post(self, text: str) -> Awaitable[int]:
        def change() -> int:
            message_id = next(self._ids)
            self.shown[message_id] = text
            return message_id

        return self.answer("post", change)

    def edit(self, message_id: int, text: str) -> Awaitable[int]:
        def change() -> int:
            self.shown[message_id] = text
            return message_id

        return self.answer("edit", change)

    def delete(self, message_id: int) -> Awaitable[int]:
        def change() -> int:
            del self.shown[message_id]
            return message_id

        return self.answer("delete", change)

    def count(self, method: str) -> int:
        return sum(1 for name, _ in self.calls if name == method)


class NoteCalls(PacedCalls):
    def __init__(self, budget: RateBudget) -> None:
        super().__init__(budget)
        self.scope = Scope("test:notes", rate=RATE, burst=3)

    def retry_after(self, exc: Exception) -> float | None:
        return exc.seconds if isinstance(exc, RateLimited) else None


class NoteWire:
    """The wire calls on numbered notes, each paced by the shared budget."""

    def __init__(self, calls: NoteCalls, notes: Notes) -> None:
        self.calls = calls
        self.notes = notes

    def message_id(self, stored: Any) -> int:
        return int(stored)

    async def edit(
        self, message_id: int, content: str, *, must_land: bool, slot: Slot | None
    ) -> Edit:
        edited = await self.paced(lambda: self.notes.edit(message_id, content), must_land, slot)
        return Edit.SKIPPED if edited is None else Edit.LANDED

    async def post(
        self, index: int, content: str, *, must_land: bool, slot: Slot | None
    ) -> int | None:
        return await self.paced(lambda: self.notes.post(content), must_land, slot)

    async def delete(self, message_id: int) -> None:
        scopes = [self.calls.scope]
        await self.calls.paced_quietly(lambda: self.notes.delete(message_id), scopes, "x")

    async def paced(
        self, request: Callable[[], Awaitable[int]], must_land: bool, slot: Slot | None = None
    ) -> int | None:
        scopes = [self.calls.scope]
        return await self.calls.paced(request, scopes, must_land=must_land, slot=slot)


class NoteSurface(QuietSurface):
    """Pages of `LIMIT` characters at the budget's pace."""

    undeliverable: tuple[type[Exception], ...] = ()

    def __init__(self, wire: NoteWire, messages: Messages[int, str], transcript: Transcript):
        self.wire = wire
        self.messages = messages
        self.transcript = transcript

    def pace(self) -> float:
        return 1 / RATE

    def scopes(self) -> list[Scope]:
        return [self.wire.calls.scope]

    async def show(self, *, must_land: bool, slot: Slot | None) -> None:
        text = self.transcript.body()
        if not text:
            return
        pages = [text[i : i + LIMIT] for i in range(0, len(text), LIMIT)]
        for index, page in enumerate(pages):
            if not await self.messages.ensure(index, page, must_land=must_land, slot=slot):
                return
        if must_land:
            await self.messages.drop_extra(len(pages))

    async def post_prompt(
        self, event: ev.ConfirmationRequired, expires_in: float
    ) -> dict[str, Any] | None:
        message_id = await self.wire.paced(lambda: self.wire.notes.post("Allow?"), True)
        return None if message_id is None else {"id": message_id}

    async def post_file(self, event: ev.FileSent) -> int | None:
        if event.file.name.endswith(".huge"):  # as a platform refuses a file too large
            await self.wire.paced(lambda: self.wire.notes.post("could not send it"), True)
            raise NotPosted("the platform refused it (file is too big)")
        return await self.wire.paced(lambda: self.wire.notes.post(f"📎 {event.file.name}"), True)

    async def file_posted(self) -> None:
        await seal_above(self.transcript, self.messages)


class GatedCalls(NoteCalls):
    """Calls whose tokens are given only once `gate` opens: the pump waits in `take`."""

    def __init__(self, budget: RateBudget) -> None:
        super().__init__(budget)
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()

    async def take(self, scopes: Sequence[Scope]) -> float:
        self.waiting.set()
        await self.gate.wait()
        return await super().take(scopes)


async def reply_for(
    redis_url: str,
    notes: Notes,
    key: str = "envelope-1",
    calls_of: type[NoteCalls] = NoteCalls,
    *,
    fresh: bool = False,
) -> StreamedReply:
    redis = Redis.from_url(redis_url)
    calls = calls_of(RateBudget(redis))
    wire = NoteWire(calls, notes)
    transcript = Transcript()
    messages: Messages[int, str] = Messages(wire, ReplyStore(redis, "notes"), key, fresh=fresh)
    return StreamedReply(
        calls, NoteSurface(wire, messages, transcript), messages, transcript, "notes"
    )


def completed() -> ev.Completed:
    return ev.Completed(finish_reason="done", iterations=1, usage=Usage())


async def test_a_short_reply_costs_one_post_and_nothing_else(redis_url: str) -> None:
    notes = Notes()
    reply = await reply_for(redis_url, notes)
    for word in ("Sure, ", "it is ", "done."):
        await reply.send(ev.TextDelta(text=word))
    await reply.send(completed())
    await reply.close()
    assert notes.calls == [("post", notes.calls[0][1])]
    assert list(notes.shown.values()) == ["Sure, it is done."]


async def test_a_first_try_looks_up_no_messages_before_it_posts(redis_url: str) -> None:
    """A turn taken up for the first time posted nothing before: its reply does not ask
    Redis for message ids, it posts and remembers them."""
    notes = Notes()
    reply = await reply_for(redis_url, notes, fresh=True)
    redis = Redis.from_url(redis_url)
    await redis.config_resetstat()
    await reply.send(ev.TextDelta(text="Hello."))
    await reply.send(completed())
    await reply.close()
    assert "cmdstat_get" not in await redis.info("commandstats")
    assert list(notes.shown.values()) == ["Hello."]
    assert await ReplyStore(redis, "notes").load("envelope-1") == [1]
    await redis.aclose()


async def test_the_first_words_show_at_once(redis_url: str) -> None:
    """No wait before the first update: it is made as soon as the pump runs, so the first
    words show while the model is still on its way. The test's own Redis round trips are
    queued behind the pump's (one event loop, one Redis serving in order), so by the time
    they are answered the first update has been made, however busy the machine."""
    notes = Notes()
    reply = await reply_for(redis_url, notes)
    await reply.send(ev.TextDelta(text="First words"))
    redis = Redis.from_url(redis_url)
    for _ in range(10):
        await redis.ping()
    await redis.aclose()
    assert list(notes.shown.values()) == ["First words"]
    await reply.send(ev.TextDelta(text=", then more."))
    await reply.send(completed())
    await reply.close()
    assert list(notes.shown.values()) == ["First words, then more."]


async def pump_had_its_turn(redis_url: str) -> None:
    """Round trips of the test's own, queued behind the pump's (see the test above)."""
    redis = Redis.from_url(redis_url)
    for _ in range(10):
        await redis.ping()
    await redis.aclose()


def answered(finish: str | None) -> ev.ModelAnswered:
    return ev.ModelAnswered(model="m", usage=Usage(), finish_reason=finish)


async def test_a_whole_answer_waits_for_the_last_update(redis_url: str) -> None:
    """The model's answer is whole (no tool to run): an update now would be followed by the
    last one a moment later, so the first words show with the last update, as one post."""
    notes = Notes()
    reply = await reply_for(redis_url, notes)
    await reply.send(ev.TextDelta(text="Hello, Ann."))
    await reply.send(answered("end_turn"))
    await pump_had_its_turn(redis_url)
    assert notes.calls == []
    await reply.send(completed())
    await reply.close()
    assert notes.calls == [("post", notes.calls[0][1])]
    assert list(notes.shown.values()) == ["Hello, Ann."]


async def test_an_answer_whole_while_the_pump_waited_for_its_token_waits_too(
    redis_url: str,
) -> None:
    """The model's last events come a moment after its text (a read of their own): the
    pump, on its way to the first update, is waiting for the budget's token by then."""
    notes = Notes()
    reply = await reply_for(redis_url, notes, calls_of=GatedCalls)
    assert isinstance(reply.calls, GatedCalls)
    await reply.send(ev.TextDelta(text="Hello, Ann."))
    await reply.calls.waiting.wait()
    await reply.send(answered("end_turn"))
    reply.calls.gate.set()
    await pump_had_its_turn(redis_url)
    assert notes.calls == []
    await reply.send(completed())
    await reply.close()
    assert notes.calls == [("post", notes.calls[0][1])]


@pytest.mark.parametrize("goes_on", ["tool", "another call"])
async def test_text_before_a_tool_or_another_call_shows_meanwhile(
    redis_url: str, goes_on: str
) -> None:
    notes = Notes()
    reply = await reply_for(redis_url, notes)
    await reply.send(ev.TextDelta(text="Let me look."))
    if goes_on == "tool":
        await reply.send(answered("tool_use"))
    else:  # the answer was whole, and the turn asks the model again (a plan's next step)
        await reply.send(answered("end_turn"))
        await reply.send(ev.Iteration(number=2, model="m"))
    await pump_had_its_turn(redis_url)
    assert list(notes.shown.values()) == ["Let me look."]
    await reply.send(completed())
    await reply.close()


async def test_a_first_update_the_platform_refused_shows_a_pace_later_with_no_new_text(
    redis_url: str,
) -> None:
    """The platform rate-limits the first update while the model stalls (a tool runs, a
    slow step): no newer update is coming, so the pump tries again a pace later."""
    notes = Notes()
    notes.refuse = 1
    reply = await reply_for(redis_url, notes)
    await reply.send(ev.TextDelta(text="Let me look that up."))
    await reply.send(ev.ToolCallStart(call_id="c1", name="web_search", arguments={}))
    await until(lambda: bool(notes.shown), "the text shown after the refusal", within=5)
    assert list(notes.shown.values()) == ["Let me look that up."]
    assert notes.count("post") == 2  # the refused one, and the one a pace later
    (_, refused), (_, shown) = notes.calls
    assert shown - refused >= 1 / RATE - 0.05
    await reply.send(completed())
    await reply.close()


async def test_updates_then_keep_the_pace_not_the_burst(redis_url: str) -> None:
    """The budget's burst (3) would allow three updates at once: the pump spends none of it."""
    notes = Notes()
    reply = await reply_for(redis_url, notes)
    started = time.monotonic()
    while time.monotonic() - started < 1.8:  # fewer than LIMIT characters: one message
        await reply.send(ev.TextDelta(text="x"))
        await asyncio.sleep(0.05)
    updates = [at for _, at in notes.calls]
    await reply.send(completed())
    await reply.close()
    assert len(updates) >= 2, notes.calls
    gaps = [b - a for a, b in itertools.pairwise(updates)]
    assert min(gaps) >= 1 / RATE * 0.9, gaps
    assert "".join(notes.shown.values()) == reply.transcript.body()


async def test_an_abandoned_reply_shows_nothing_more(redis_url: str) -> None:
    """A turn stopped because its worker lost the session: the worker carrying it on edits
    the same messages, so this one must not post or edit after it."""
    notes = Notes()
    reply = await reply_for(redis_url, notes)
    await reply.send(ev.TextDelta(text="Shown at once."))
    await reply.close()  # as far as this reply goes: its first message is posted
    again = await reply_for(redis_url, notes)
    await again.send(ev.TextDelta(text=" More text, never shown by this worker."))
    await again.close(abandoned=True)
    assert notes.calls == [("post", notes.calls[0][1])]
    assert list(notes.shown.values()) == ["Shown at once."]


async def test_the_last_update_lands_through_rate_limits(redis_url: str) -> None:
    notes = Notes()
    reply = await reply_for(redis_url, notes)
    await reply.send(ev.TextDelta(text="The whole answer."))
    await reply.send(completed())
    notes.refuse = 3
    await reply.close()
    assert notes.refuse == 0 and notes.count("post") == 4
    assert list(notes.shown.values()) == ["The whole answer."]


async def test_a_resumed_reply_edits_its_messages_and_drops_what_it_no_longer_needs(
    redis_url: str,
) -> None:
    notes = Notes()
    first = await reply_for(redis_url, notes)
    await first.send(ev.TextDelta(text="a" * (LIMIT * 3)))
    await first.close()  # as if the worker died with three messages posted
    assert len(notes.shown) == 3
    posted = sorted(notes.shown)
    again = await reply_for(redis_url, notes)  # another worker runs the turn again
    await again.send(ev.TextDelta(text="b" * LIMIT))
    await again.send(completed())
    await again.close()
    assert notes.shown == {posted[0]: "b" * LIMIT}
    assert notes.count("post") == 3 and notes.count("delete") == 2


async def test_an_approval_prompt_is_posted_after_the_text_and_remembered(
    redis_url: str,
) -> None:
    notes = Notes()
    reply = await reply_for(redis_url, notes)
    await reply.send(ev.TextDelta(text="Let me check."))
    await reply.send(
        ev.ConfirmationRequired(
            confirmation_id="c-1", calls=[], expires_at=time.time() + 60, can_remember=False
        )
    )
    assert list(notes.shown.values()) == ["Let me check.", "Allow?"]
    remembered = await reply.messages.store.load_prompt("c-1")
    assert remembered == {"id": max(notes.shown)}
    await reply.close()


def chart(name: str = "chart.png", digit: str = "a") -> ev.FileSent:
    ref = FileRef(sha256=digit * 64, media_type="image/png", name=name, size=10)
    return ev.FileSent(call_id="call-1", file=ref)


async def test_a_file_is_posted_after_the_text_so_far_and_once_however_often_it_comes(
    redis_url: str,
) -> None:
    notes = Notes()
    reply = await reply_for(redis_url, notes)
    await reply.send(ev.TextDelta(text="Plotting it."))
    await reply.send(chart())
    assert list(notes.shown.values()) == ["Plotting it.", "📎 chart.png"]
    await reply.send(chart())  # the model sent the same bytes again in the same turn
    await reply.close()  # and the worker died here
    again = await reply_for(redis_url, notes)  # another worker runs the turn again
    await again.send(ev.TextDelta(text="Plotting it."))
    await again.send(chart())
    await again.send(chart("other.png", "b"))
    await again.send(completed())
    await again.close()
    assert list(notes.shown.values()) == ["Plotting it.", "📎 chart.png", "📎 other.png"]
    assert notes.count("post") == 3


async def test_posting_a_file_says_what_became_of_it(redis_url: str) -> None:
    """Posted (now, or earlier in the turn) is "", refused is why: the turn's model reads
    that, and a refused file is not remembered as posted, so sending it again tries again."""
    notes = Notes()
    reply = await reply_for(redis_url, notes)
    await reply.send(ev.TextDelta(text="Here."))
    assert await reply.post_file(chart()) == ""
    assert await reply.post_file(chart()) == ""  # the same bytes: in the chat already
    refused = "the platform refused it (file is too big); the person was told it could not be sent"
    assert await reply.post_file(chart("all.huge", "b")) == refused
    assert await reply.post_file(chart("all.huge", "b")) == refused
    await reply.close()
    assert list(notes.shown.values()) == [
        "Here.", "📎 chart.png", "could not send it", "could not send it"
    ]  # fmt: skip


async def test_text_after_a_file_shows_below_it_and_the_text_above_stays(
    redis_url: str,
) -> None:
    notes = Notes()
    reply = await reply_for(redis_url, notes)
    await reply.send(ev.TextDelta(text="Plotting it."))
    await reply.send(ev.ToolCallStart(call_id="call-1", name="run_python", arguments={}))
    await reply.send(chart())
    await reply.send(ev.Iteration(number=2))
    await reply.send(ev.TextDelta(text="Lisbon is larger."))
    await reply.send(completed())
    await reply.close()
    assert list(notes.shown.values()) == ["Plotting it.", "📎 chart.png", "Lisbon is larger."]
    assert notes.count("edit") == 0 and notes.count("delete") == 0
