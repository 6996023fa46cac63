"""One streamed reply, the same way on every chat platform; platforms say only what differs.

Text arrives in small deltas and is coalesced: a pump shows whatever text there is at most
once per pace of the platform, so a fast model costs one update per pace, not one per
token. The first update is made as soon as there is text, so a reply starts to show the
moment its first words exist; text that arrives while an update is on its way is coalesced
into the next one, and from then on updates keep the pace, from when each was shown; one the
platform did not show (rate limited, a passing failure) is tried again a pace later, whether
or not more text came, so a reply whose model stalls (a tool, a slow step) still shows. Once
the model's answer is whole (`ModelAnswered` with no tool to run), the pump holds: the last
update, a moment later, shows it, so a short reply read in one burst costs only its last
update, never a draft or an edit first; a turn that goes on after it (another model call, a
tool) lets the pump go again. The pump takes its update's token from the shared
rate budget (a `Slot`) before it shows anything, so the burst the budget allows is left for
other calls, and the update's first call spends that token.

Updates come in two kinds. Intermediate ones may be skipped (a newer one follows); once the
turn has ended none is made but the last, which must land: it waits for the budget and
outlasts rate limits, and a platform failure that will not pass (the chat is gone, the bot
was removed) is logged instead of failing the turn, which would only cost model calls again.

The ids of the messages a reply posted are kept in Redis under its first envelope
(`ReplyStore`), so a turn that another worker resumes after a crash edits the same messages
instead of posting the reply a second time; when its text now needs fewer messages, the
extra ones are deleted by the last update. An approval prompt is posted after the text so
far has landed, and where it is is remembered, so it can show its outcome later. A file a
tool made (`FileSent`) is posted the same way, after the text so far, and what was posted is
remembered by its SHA-256, so a resumed turn never posts it a second time; a surface that
edits messages in place then shows the text that follows below the file. What became of the
file is the answer of `post_file`, which the turn waits for: a file the platform refused
(`NotPosted`) is said to the model as such, never as sent.

The pump is composed, and calls downward only: `StreamedReply` (the pump) asks the
platform's `Surface` to show the transcript; the surface renders it and splits it into
messages, which it makes show through the shared `Messages` (edit, post, the crash-safe ids),
which calls the platform's `Wire`. No layer calls back into the one above it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Coroutine
from typing import Any, Protocol

from adapters.chat.pacing import PacedCalls, Slot
from adapters.chat.reply_messages import Messages
from adapters.chat.transcript import Transcript
from bot.redis.ratelimit import Scope
from bot.vocabulary import events as ev
from bot.vocabulary.helpers import TOOL as HELPER_TOOL

log = logging.getLogger(__name__)


class NotPosted(Exception):
    """The platform did not take a file, and the chat was told; why, in words the model reads
    ("Telegram refused it (Bad Request: file is too big)")."""


class Surface(Protocol):
    """What a platform shows a reply with; the pump calls it, it never calls the pump. It is
    built with the reply's `Transcript` and `Messages`, which it reads and writes."""

    # Platform failures that retrying the turn will not change (the chat is gone).
    undeliverable: tuple[type[Exception], ...]

    def pace(self) -> float:
        """Seconds between two intermediate updates."""
        ...

    def scopes(self) -> list[Scope]:
        """The budget scopes of the next update's first call; the pump takes its token."""
        ...

    def shows_tool(self) -> bool:
        """Whether updates show the running tool inline (a platform with a status may not)."""
        ...

    async def show(self, *, must_land: bool, slot: Slot | None) -> None:
        """Make the reply's messages show the transcript: render it, split it into messages
        within the platform's limits, and `ensure` each (then `drop_extra` when it must
        land). Return early once a call that may be skipped was skipped."""
        ...

    async def post_prompt(
        self, event: ev.ConfirmationRequired, expires_in: float
    ) -> dict[str, Any] | None:
        """Post an approval prompt; what to remember about it, or None if it was not posted."""
        ...

    async def post_file(self, event: ev.FileSent) -> Any:
        """Post a file a tool made, as a picture or a document, where the reply is; the
        posted message's id (JSON). Raises `NotPosted` when it was not posted (the platform
        refused it, or it is gone from the store): the surface said so in the chat and
        logged why."""
        ...

    async def file_posted(self) -> None:
        """A file, or a helper's approval prompt, was posted below the reply's text while
        the turn goes on: a surface that edits its messages in place has them kept as they
        are (`seal_above`), so the text that follows shows below it."""
        ...

    def beside(self) -> Coroutine[Any, Any, None] | None:
        """Work to run beside the turn until the reply closes (a typing indicator)."""
        ...

    async def started(self) -> None:
        """The turn's first event: start showing that the bot is busy."""
        ...

    async def tool_started(self, name: str) -> None:
        """A tool began to run."""
        ...

    async def thinking(self) -> None:
        """The model's thinking grew (the transcript holds it), for a platform that shows it
        apart from the reply's text."""
        ...

    async def planned(self, event: ev.PlanUpdated, lock: asyncio.Lock) -> None:
        """A `plan_execute` turn's plan changed; the transcript shows it inline unless the
        platform streams it (under `lock`, the one updates are shown under)."""
        ...

    async def joined(self, event: ev.Joined) -> None:
        """Messages the person sent meanwhile were taken into the turn
        (`bot.vocabulary.steering`): shown the way the platform marks a message it took."""
        ...

    async def helping(
        self, event: ev.ToolCallStart | ev.ToolCallResult, lock: asyncio.Lock
    ) -> None:
        """A helper started or ended (a `delegate` call's start or result); the transcript
        shows its status line unless the platform shows helpers its own way (under `lock`)."""
        ...

    async def resumed(self) -> None:
        """The first update found messages an earlier worker posted for this reply."""
        ...

    async def ended(self) -> None:
        """The last update landed, in a turn that had `started`: stop showing it is busy."""
        ...

    async def closed(self) -> None:
        """The reply is closed, whatever happened: let go of what the surface holds."""
        ...

    async def finished(self) -> None:
        """The turn is over here and its last update was tried: take down what showed only
        while it ran (a Stop button). Not called for a reply another worker carries on."""
        ...


class QuietSurface:
    """The hooks a surface may leave as they are: nothing beside, nothing to show for them."""

    async def file_posted(self) -> None:
        return None

    def shows_tool(self) -> bool:
        return True

    def beside(self) -> Coroutine[Any, Any, None] | None:
        return None

    async def started(self) -> None:
        return None

    async def tool_started(self, name: str) -> None:
        return None

    async def thinking(self) -> None:
        return None

    async def planned(self, event: ev.PlanUpdated, lock: asyncio.Lock) -> None:
        return None

    async def joined(self, event: ev.Joined) -> None:
        return None

    async def helping(
        self, event: ev.ToolCallStart | ev.ToolCallResult, lock: asyncio.Lock
    ) -> None:
        return None

    async def resumed(self) -> None:
        return None

    async def ended(self) -> None:
        return None

    async def closed(self) -> None:
        return None

    async def finished(self) -> None:
        return None


async def seal_above(transcript: Transcript, messages: Messages[Any, Any]) -> None:
    """Keep the reply's messages as they are above a file just posted, so the text that
    follows goes into new messages below it. Messages that showed only a running tool's
    status, no text yet, are deleted instead: the answer follows the file."""
    if not transcript.body():
        await messages.drop_extra(0)
    transcript.seal()
    messages.seal()


class StreamedReply:
    """A `ReplyStream` for one turn on a chat platform: the pump (see the module docstring)."""

    def __init__(
        self,
        calls: PacedCalls,
        surface: Surface,
        messages: Messages[Any, Any],
        transcript: Transcript,
        where: str,
    ) -> None:
        self.calls = calls
        self.surface = surface
        self.messages = messages
        self.transcript = transcript
        self.where = where  # the session, for the log
        self._dirty = asyncio.Event()
        self._started = False
        self._ended = False  # the turn is over: only the last update is still to come
        self._pump: asyncio.Task[None] | None = None
        self._background: list[asyncio.Task[None]] = []
        self._lock = asyncio.Lock()
        self._going = asyncio.Event()  # clear while the pump holds (the answer is whole)
        self._going.set()

    async def send(self, event: ev.AgentEvent) -> None:
        if self._paced(event):
            return
        if not self._started:
            self._started = True
            await self._start()
        if isinstance(event, ev.Completed):
            self._ended = True
        before = self._visible()
        self.transcript.apply(event)
        await self._told(event)
        if isinstance(event, ev.ConfirmationRequired):
            await self._last_update()
            await self._ask(event)
            return
        if isinstance(event, ev.FileSent):
            await self._last_update()
            await self._attach(event)
            return
        if self._visible() == before or self._ended:
            return  # nothing new to show, or the last update shows it: no call is spent
        self._dirty.set()
        if self._pump is None:
            self._pump = asyncio.create_task(self._run_pump())

    async def _told(self, event: ev.AgentEvent) -> None:
        """The surface's hooks for what it shows besides the reply's text."""
        if isinstance(event, ev.ToolCallStart):
            await self.surface.tool_started(event.name)
            if event.name == HELPER_TOOL:
                await self.surface.helping(event, self._lock)
        elif isinstance(event, ev.ToolCallResult) and event.name == HELPER_TOOL:
            await self.surface.helping(event, self._lock)
        elif isinstance(event, ev.ThinkingDelta):
            await self.surface.thinking()
        elif isinstance(event, ev.PlanUpdated):
            await self.surface.planned(event, self._lock)
        elif isinstance(event, ev.Joined):
            await self.surface.joined(event)

    def _paced(self, event: ev.AgentEvent) -> bool:
        """Hold the pump once the model's answer is whole, and let it go again when the turn
        goes on (see the module docstring); True for an event that is only for that."""
        if isinstance(event, ev.ModelAnswered):
            if event.finish_reason not in (None, "tool_use"):
                self._going.clear()  # the last update, a moment away, shows the answer
            return True
        if isinstance(event, ev.Iteration | ev.ToolCallStart):
            self._going.set()
        return False

    async def post_file(self, event: ev.FileSent) -> str:
        """`send` of a file, saying what became of it (see `ReplyStream.post_file`)."""
        if not self._started:
            self._started = True
            await self._start()
        await self._last_update()
        return await self._attach(event)

    async def settle(self) -> None:
        """The last update, now: the text lands before what follows the answer is made. A
        chat that cannot be reached is logged, as `close` logs it."""
        if not self._started:
            return
        try:
            await self._last_update()
        except self.surface.undeliverable as exc:
            log.warning("cannot deliver the reply in %s: %s", self.where, self.calls.reason(exc))

    async def close(self, *, abandoned: bool = False) -> None:
        try:
            await self._close(abandoned=abandoned)
        finally:
            await self.surface.closed()

    async def _close(self, *, abandoned: bool) -> None:
        tasks = [task for task in (self._pump, *self._background) if task is not None]
        async with self._lock:  # an update in flight finishes first, so its message is known
            for task in tasks:
                task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if abandoned:  # another worker carries the turn on, editing the same messages
            return
        self.transcript.tool = ""
        try:
            await self._last_update()
        except self.surface.undeliverable as exc:
            log.warning("cannot deliver the reply in %s: %s", self.where, self.calls.reason(exc))
        finally:
            await self.surface.finished()

    async def _start(self) -> None:
        work = self.surface.beside()
        if work is not None:
            self._background.append(asyncio.create_task(work))
        await self.surface.started()

    def _visible(self) -> tuple[str, str]:
        """What an update would show: the text, and the running tool where it is inline."""
        return self.transcript.body(), self.transcript.tool if self.surface.shows_tool() else ""

    async def _run_pump(self) -> None:
        """Show the first text at once, then the newest text once a pace (see the module
        docstring); coalesces everything in between."""
        due = time.monotonic()
        while True:
            await self._dirty.wait()
            await asyncio.sleep(due - time.monotonic())
            await self._going.wait()
            if self._ended:
                return
            scopes = self.surface.scopes()
            await self.calls.take(scopes)
            await self._going.wait()  # the answer may have become whole while it waited
            if self._ended:
                return
            self._dirty.clear()
            self.messages.behind = False
            try:
                async with self._lock:
                    await self._update(must_land=False, slot=Slot(scopes))
            except Exception as exc:  # an intermediate update; the last one reports failures
                log.warning("streaming update in %s failed: %s", self.where, exc)
                self.messages.behind = True
            if self.messages.behind:  # not shown (rate limited, a passing failure): again
                self._dirty.set()  # after the pace, whether or not more text comes
            due = time.monotonic() + self.surface.pace()  # from when it was shown

    async def _last_update(self) -> None:
        async with self._lock:
            await self._update(must_land=True, slot=None)
        if self._started:
            await self.surface.ended()

    async def _update(self, *, must_land: bool, slot: Slot | None) -> None:
        if await self.messages.load():
            await self.surface.resumed()
        await self.surface.show(must_land=must_land, slot=slot)

    async def _attach(self, event: ev.FileSent) -> str:
        """Post the file unless this reply posted it already (before a crash, or the same
        bytes earlier in the turn), and remember that it did; "" once it is in the chat,
        else why it is not."""
        store, key, sha256 = self.messages.store, self.messages.key, event.file.sha256
        if await store.file_posted(key, sha256):
            log.info("%s was posted already in %s; not again", event.file.name, self.where)
            return ""
        try:
            posted = await self.surface.post_file(event)
        except NotPosted as refused:
            return f"{refused}; the person was told it could not be sent"
        except self.surface.undeliverable as exc:
            why = self.calls.reason(exc)
            log.warning("cannot post a file in %s: %s", self.where, why)
            return f"the chat could not be reached ({why})"
        except Exception:  # a file that cannot be posted must not cost the turn its answer
            log.exception("posting %s in %s failed", event.file.name, self.where)
            return "posting it failed"
        await store.save_file(key, sha256, posted)
        await self.surface.file_posted()
        return ""

    async def _ask(self, event: ev.ConfirmationRequired) -> None:
        """Post the approval prompt with its buttons, and remember where it is; once (a
        resumed turn finds a helper's request, asked here before the crash, again)."""
        if event.confirmation_id is None:
            return
        if await self.messages.store.load_prompt(event.confirmation_id) is not None:
            return
        expires_in = (event.expires_at or time.time()) - time.time()
        remembered = await self.surface.post_prompt(event, expires_in)
        if remembered is not None:
            await self.messages.store.save_prompt(event.confirmation_id, remembered)
            if event.helper:  # the turn goes on: what it says next goes below the prompt
                await self.surface.file_posted()
