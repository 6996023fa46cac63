"""Telegram updates handled side by side across chats, in order within each, an album as one.

Handling an update can take a while: a photo or a voice note is downloaded and checked before
its envelope is submitted. Handled one after another, one slow update would hold every other
chat up; handled all at once, a person's text could overtake the photo they sent just
before it. So each chat has a lane: its updates are handled in the order they arrived, while
the lanes of different chats run side by side (`AT_ONCE` at most, so a burst does not start a
download per chat at once).

An album arrives as several updates, one per photo or file, sharing a `media_group_id`. The
lane waits for the rest of it (`ALBUM_WAIT` after its latest part, `ALBUM_MAX` at most) and
hands the parts over together, so the album is one turn with all its files rather than a
turn per photo.

Nothing is confirmed to Telegram before it was handled: `offset` is the first update not yet
handled, for long polling's next getUpdates (which hands the unfinished ones over again: they
are recognised and left to their lane), and `put` returns a future that a webhook's answer
waits on. At most `PENDING` updates are held; past that polling waits for room.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from aiogram.types import Update

from bot.waits import set_within

log = logging.getLogger(__name__)

ALBUM_WAIT = 0.5  # seconds after an album's latest part before it is taken as whole
ALBUM_MAX = 2.0  # seconds after its first part at most
ALBUM_PARTS = 10  # Telegram's most per album
AT_ONCE = 32  # updates being handled at the same time, across all chats
PENDING = 1_000  # updates held at most: received but not yet handled

Handle = Callable[[Sequence[Update]], Awaitable[None]]


def lane_of(update: Update) -> int:
    """The chat an update belongs to (0 for one that names none)."""
    message = update.message or update.edited_message
    if message is not None:
        return message.chat.id
    if update.callback_query is not None:
        pressed = update.callback_query
        return pressed.message.chat.id if pressed.message else pressed.from_user.id
    if update.stopped_message_generation is not None:
        return update.stopped_message_generation.chat.id
    return 0


def album_of(update: Update) -> str | None:
    """The album a message update is part of, if it is."""
    message = update.message
    return message.media_group_id if message is not None else None


@dataclass
class _Held:
    update: Update
    arrived: float = field(default_factory=time.monotonic)
    done: asyncio.Future[None] = field(default_factory=asyncio.Future)


class Lanes:
    """The chats' lanes; see the module docstring. `handle` is given one update, or an
    album's parts in order, and what it raises is set on their futures."""

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._lanes: dict[int, deque[_Held]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._unfinished: set[int] = set()
        self._next = 0  # the update id after the highest one taken
        self._at_once = asyncio.Semaphore(AT_ONCE)
        self._changed = asyncio.Event()

    @property
    def offset(self) -> int | None:
        """The first update id not yet handled: what getUpdates may confirm."""
        if self._unfinished:
            return min(self._unfinished)
        return self._next or None

    @property
    def busy(self) -> bool:
        return bool(self._unfinished)

    def put(self, update: Update) -> asyncio.Future[None]:
        """Queue `update` in its chat's lane; the future is done once it was handled."""
        held = _Held(update)
        self._unfinished.add(update.update_id)
        self._next = max(self._next, update.update_id + 1)
        chat = lane_of(update)
        lane = self._lanes.get(chat)
        if lane is None:
            lane = self._lanes[chat] = deque()
            task = asyncio.create_task(self._run(chat, lane))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        lane.append(held)
        return held.done

    def take(self, updates: Sequence[Update]) -> None:
        """Queue what a getUpdates returned that is new, as far as there is room."""
        for update in updates:
            if update.update_id < self._next:
                continue  # handled, or still in its lane
            if len(self._unfinished) >= PENDING:
                return  # getUpdates hands it over again, once there is room
            self.put(update)

    async def settle(self, at_most: float) -> None:
        """Wait until an update was handled, `at_most` seconds; at once if none is held."""
        if self._unfinished:
            self._changed.clear()
            await set_within(self._changed, at_most)

    async def finish(self) -> None:
        """Return once every update taken was handled (the caller bounds the wait)."""
        while self._unfinished:
            self._changed.clear()
            await self._changed.wait()

    @property
    def unfinished(self) -> int:
        return len(self._unfinished)

    async def aclose(self) -> None:
        """Stop every lane; what they had not handled is not confirmed, so comes again."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self, chat: int, lane: deque[_Held]) -> None:
        try:
            while lane:
                parts = await self._gather(lane)
                async with self._at_once:
                    await self._hand_over(parts)
        finally:
            del self._lanes[chat]
            for held in lane:  # cancelled: their updates come again
                held.done.cancel()

    async def _gather(self, lane: deque[_Held]) -> list[_Held]:
        """The next update of `lane`, or all the parts of the album it begins."""
        first = lane[0]
        album = album_of(first.update)
        if album is None:
            return [lane.popleft()]
        while True:
            parts = _leading(lane, album)
            latest = max(held.arrived for held in parts)
            wait = min(latest + ALBUM_WAIT, first.arrived + ALBUM_MAX) - time.monotonic()
            if wait <= 0 or len(parts) >= ALBUM_PARTS:
                break
            await asyncio.sleep(wait)
        return [lane.popleft() for _ in parts]

    async def _hand_over(self, parts: list[_Held]) -> None:
        failure: BaseException | None = None
        try:
            await self._handle([held.update for held in parts])
        except Exception as exc:  # the caller's to answer for (a webhook's 500)
            failure = exc
        except asyncio.CancelledError:
            for held in parts:
                held.done.cancel()
            raise
        for held in parts:
            self._unfinished.discard(held.update.update_id)
            if held.done.done():
                continue  # whoever waited on it gave up
            if failure is None:
                held.done.set_result(None)
            else:
                held.done.set_exception(failure)
                held.done.exception()  # polling does not look: not an unretrieved error
        self._changed.set()


def _leading(lane: deque[_Held], album: str) -> list[_Held]:
    """The parts of `album` at the head of `lane`, in order, as many as an album has."""
    parts: list[_Held] = []
    for held in lane:
        if album_of(held.update) != album or len(parts) == ALBUM_PARTS:
            break
        parts.append(held)
    return parts
