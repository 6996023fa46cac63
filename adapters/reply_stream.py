"""One streamed reply, the same way on every chat platform; platforms say only what differs.

Text arrives in small deltas and is coalesced: a pump shows whatever text there is at most
once per pace of the platform, so a fast model costs one update per pace, not one per
token. The first update is made as soon as there is text, so a reply starts to show the
moment its first words exist; text that arrives while an update is on its way is coalesced
into the next one, and from then on updates keep the pace, from when each was shown. A reply
that ends before the pump has had its turn (a short one, read in one burst) costs only its
last update. The pump takes its update's token from the shared
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
far has landed, and where it is is remembered, so it can show its outcome later.

A platform subclasses `StreamedReply` with its wire calls (`post`, `edit`, `delete`,
`post_prompt`), its rendering and limits (`show`, which splits the text into messages and
calls `ensure` for each) and its pace (`pace`, `scopes`); see the hooks' docstrings.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from adapters.pacing import PacedCalls, Slot
from adapters.replies import ReplyStore
from adapters.transcript import Transcript
from bot.redis.ratelimit import Scope
from bot.vocabulary import events as ev

log = logging.getLogger(__name__)
Calls = TypeVar("Calls", bound=PacedCalls)
Id = TypeVar("Id")
Content = TypeVar("Content")


@dataclass
class Posted(Generic[Id, Content]):
    """A message of the reply: its platform id, and what it shows."""

    id: Id
    content: Content | None  # None: posted by an earlier worker, content unknown


class Edit(enum.Enum):
    """How an edit of a posted message went."""

    LANDED = "landed"
    SKIPPED = "skipped"  # an intermediate update found no room in the budget
    GONE = "gone"  # the message was deleted by someone: post it again


class StreamedReply(ABC, Generic[Calls, Id, Content]):
    """A `ReplyStream` for one turn on a chat platform; see the module docstring."""

    # Platform failures that retrying the turn will not change (the chat is gone).
    undeliverable: ClassVar[tuple[type[Exception], ...]] = ()

    def __init__(self, calls: Calls, store: ReplyStore, key: str, where: str) -> None:
        self.calls = calls
        self.store = store
        self.key = key  # the turn's first envelope: where the reply's message ids are kept
        self.where = where  # the session, for the log
        self.transcript = Transcript()
        self.posted: list[Posted[Id, Content]] | None = None  # loaded by the first update
        self.slot: Slot | None = None  # the pump's token for the update being shown
        self._dirty = asyncio.Event()
        self._started = False
        self._ended = False  # the turn is over: only the last update is still to come
        self._pump: asyncio.Task[None] | None = None
        self._background: list[asyncio.Task[None]] = []
        self._lock = asyncio.Lock()

    # --- what a platform provides -----------------------------------------------------------

    @abstractmethod
    def pace(self) -> float:
        """Seconds between two intermediate updates."""

    @abstractmethod
    def scopes(self) -> list[Scope]:
        """The budget scopes of the next update's first call; the pump takes its token."""

    @abstractmethod
    def message_id(self, stored: Any) -> Id:
        """A message id as `ReplyStore` gives it back (JSON)."""

    @abstractmethod
    async def show(self, *, must_land: bool) -> None:
        """Make the reply's messages show the transcript: render it, split it into messages
        within the platform's limits, and `ensure` each (then `drop_extra` when it must
        land). Return early once a call that may be skipped was skipped."""

    @abstractmethod
    async def edit(self, message_id: Id, content: Content, *, must_land: bool) -> Edit:
        """Make a posted message show `content`."""

    @abstractmethod
    async def post(self, index: int, content: Content, *, must_land: bool) -> Id | None:
        """Post message `index` of the reply; None when it was skipped for the budget."""

    @abstractmethod
    async def delete(self, message_id: Id) -> None:
        """Delete a message the reply no longer needs; failures are only logged."""

    @abstractmethod
    async def post_prompt(
        self, event: ev.ConfirmationRequired, expires_in: float
    ) -> dict[str, Any] | None:
        """Post an approval prompt; what to remember about it, or None if it was not posted."""

    def shows_tool(self) -> bool:
        """Whether updates show the running tool inline (a platform with a status may not)."""
        return True

    async def started(self) -> None:
        """The turn's first event: start showing that the bot is busy."""

    async def tool_started(self, name: str) -> None:
        """A tool began to run."""

    async def planned(self, event: ev.PlanUpdated) -> None:
        """A `plan_execute` turn's plan changed; by default the transcript shows it inline,
        as a checklist above the answer."""

    async def resumed(self) -> None:
        """The first update found messages an earlier worker posted for this reply."""

    async def ended(self) -> None:
        """The last update landed, in a turn that had `started`: stop showing it is busy."""

    # --- events -----------------------------------------------------------------------------

    async def send(self, event: ev.AgentEvent) -> None:
        if not self._started:
            self._started = True
            await self.started()
        if isinstance(event, ev.Completed):
            self._ended = True
        before = self._visible()
        self.transcript.apply(event)
        if isinstance(event, ev.ToolCallStart):
            await self.tool_started(event.name)
        elif isinstance(event, ev.PlanUpdated):
            await self.planned(event)
        elif isinstance(event, ev.ConfirmationRequired):
            await self._last_update()
            await self._ask(event)
            return
        if self._visible() == before or self._ended:
            return  # nothing new to show, or the last update shows it: no call is spent
        self._dirty.set()
        if self._pump is None:
            self._pump = asyncio.create_task(self._run_pump())

    async def close(self, *, abandoned: bool = False) -> None:
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
        except self.undeliverable as exc:
            log.warning("cannot deliver the reply in %s: %s", self.where, self.calls.reason(exc))

    def in_background(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` (a typing indicator) until the reply closes."""
        self._background.append(asyncio.create_task(work))

    def _visible(self) -> tuple[str, str]:
        """What an update would show: the text, and the running tool where it is inline."""
        return self.transcript.body(), self.transcript.tool if self.shows_tool() else ""

    # --- pacing -----------------------------------------------------------------------------

    async def _run_pump(self) -> None:
        """Show the first text at once, then the newest text once a pace (see the module
        docstring); coalesces everything in between."""
        due = time.monotonic()
        while True:
            await self._dirty.wait()
            await asyncio.sleep(due - time.monotonic())
            if self._ended:
                return
            scopes = self.scopes()
            await self.calls.take(scopes)
            if self._ended:
                return
            self._dirty.clear()
            try:
                async with self._lock:
                    self.slot = Slot(scopes)
                    await self._update(must_land=False)
            except Exception as exc:  # an intermediate update; the last one reports failures
                log.warning("streaming update in %s failed: %s", self.where, exc)
            finally:
                self.slot = None
            due = time.monotonic() + self.pace()  # from when it was shown, not asked for

    async def _last_update(self) -> None:
        async with self._lock:
            await self._update(must_land=True)
        if self._started:
            await self.ended()

    async def _update(self, *, must_land: bool) -> None:
        await self.load_posted()
        await self.show(must_land=must_land)

    async def load_posted(self) -> list[Posted[Id, Content]]:
        """The reply's messages, read once: those an earlier worker posted, if any."""
        if self.posted is None:
            self.posted = [
                Posted(self.message_id(i), None) for i in await self.store.load(self.key)
            ]
            if self.posted:
                await self.resumed()
        return self.posted

    async def _ask(self, event: ev.ConfirmationRequired) -> None:
        """Post the approval prompt with its buttons, and remember where it is."""
        if event.confirmation_id is None:
            return
        expires_in = (event.expires_at or time.time()) - time.time()
        remembered = await self.post_prompt(event, expires_in)
        if remembered is not None:
            await self.store.save_prompt(event.confirmation_id, remembered)

    # --- the reply's messages ---------------------------------------------------------------

    async def ensure(self, index: int, content: Content, *, must_land: bool) -> bool:
        """Make message `index` of the reply show `content`: edit it, or post it if new.

        False when an update that may be skipped was skipped and nothing was posted."""
        posted = self.posted
        assert posted is not None
        if index < len(posted):
            if posted[index].content == content:
                return True
            edit = await self.edit(posted[index].id, content, must_land=must_land)
            if edit is Edit.LANDED:
                posted[index].content = content
                return True
            if edit is Edit.SKIPPED:
                return False
            del posted[index:]  # gone (deleted by someone): post it again
        message_id = await self.post(index, content, must_land=must_land)
        if message_id is None:
            return False
        await self.add(message_id, content)
        return True

    async def add(self, message_id: Id, content: Content | None) -> None:
        """A message the reply just posted; remembered at once, before anything else."""
        assert self.posted is not None
        self.posted.append(Posted(message_id, content))
        await self.remember()

    async def remember(self) -> None:
        assert self.posted is not None
        await self.store.save(self.key, [message.id for message in self.posted])

    async def drop_extra(self, count: int) -> None:
        """A reply that got shorter after a restart: remove what it no longer says."""
        assert self.posted is not None
        for extra in self.posted[count:]:
            await self.delete(extra.id)
        if len(self.posted) > count:
            del self.posted[count:]
            await self.remember()
