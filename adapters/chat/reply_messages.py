"""The messages of one streamed reply: what each shows, their ids kept in Redis so that a
worker resuming the turn edits them instead of posting the reply twice, and the platform's
`Wire`, the calls that post, edit and delete them. The surface of each platform makes them
show the transcript through `Messages.ensure`; this module calls only the wire below it."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from adapters.chat.pacing import Slot
from adapters.chat.replies import ReplyStore

Id = TypeVar("Id")
Content = TypeVar("Content")
Shown_contra = TypeVar("Shown_contra", contravariant=True)  # what a wire call makes a message show


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


class Wire(Protocol[Id, Shown_contra]):
    """A platform's calls on the messages of a reply. `slot` is the pump's token for the
    update being shown (None outside one): the update's first call spends it."""

    def message_id(self, stored: Any) -> Id:
        """A message id as `ReplyStore` gives it back (JSON)."""
        ...

    async def edit(
        self, message_id: Id, content: Shown_contra, *, must_land: bool, slot: Slot | None
    ) -> Edit:
        """Make a posted message show `content`."""
        ...

    async def post(
        self, index: int, content: Shown_contra, *, must_land: bool, slot: Slot | None
    ) -> Id | None:
        """Post message `index` of the reply; None when it was skipped for the budget."""
        ...

    async def delete(self, message_id: Id) -> None:
        """Delete a message the reply no longer needs; failures are only logged."""
        ...


class Messages(Generic[Id, Content]):
    """The messages of one reply, as posted through `wire`; their ids are kept in Redis under
    the reply's `key` (its first envelope), so a worker resuming the turn edits them.

    Once the reply posted something else below them (a file), the messages so far are
    `seal`ed: they keep what they show, and the indexes the surface asks for from then on
    are of new messages, posted below it."""

    def __init__(
        self, wire: Wire[Id, Content], store: ReplyStore, key: str, *, fresh: bool = False
    ) -> None:
        """`fresh`: nothing was posted under `key` yet (the turn's first try), so there are
        no ids to read."""
        self.wire = wire
        self.store = store
        self.key = key
        self.posted: list[Posted[Id, Content]] = []
        self.loaded = fresh
        self.base = 0  # how many posted messages are sealed: index 0 is the one after them
        self.behind = False  # an update that may be skipped was (the pump tries it again)

    async def load(self) -> bool:
        """Read the ids once; True when this read found messages an earlier worker posted."""
        if self.loaded:
            return False
        stored = await self.store.load(self.key)
        self.posted = [Posted(self.wire.message_id(i), None) for i in stored]
        self.loaded = True
        return bool(self.posted)

    async def ensure(
        self, index: int, content: Content, *, must_land: bool, slot: Slot | None
    ) -> bool:
        """Make message `index` (after the sealed ones) show `content`: edit it, or post it
        if new. False when an update that may be skipped was skipped and nothing was posted."""
        posted, at = self.posted, self.base + index
        if at < len(posted):
            if posted[at].content == content:
                return True
            edit = await self.wire.edit(posted[at].id, content, must_land=must_land, slot=slot)
            if edit is Edit.LANDED:
                posted[at].content = content
                return True
            if edit is Edit.SKIPPED:
                self.behind = True
                return False
            del posted[at:]  # gone (deleted by someone): post it again
        message_id = await self.wire.post(at, content, must_land=must_land, slot=slot)
        if message_id is None:
            self.behind = True
            return False
        await self.add(message_id, content)
        return True

    async def add(self, message_id: Id, content: Content | None) -> None:
        """A message the reply just posted; remembered at once, before anything else."""
        self.posted.append(Posted(message_id, content))
        await self.remember()

    async def remember(self) -> None:
        await self.store.save(self.key, [message.id for message in self.posted])

    async def drop_extra(self, count: int) -> None:
        """A reply that got shorter after a restart: remove what it no longer says."""
        keep = self.base + count
        for extra in self.posted[keep:]:
            await self.wire.delete(extra.id)
        if len(self.posted) > keep:
            del self.posted[keep:]
            await self.remember()

    def seal(self) -> None:
        """Leave the messages posted so far as they are: what follows goes below."""
        self.base = len(self.posted)
