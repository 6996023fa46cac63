"""A session's state in Redis, written as it changes: a turn's save costs what the turn added,
and what Redis holds stays small however long the conversation.

The state is saved after every step of a turn (`bot.agent.loop`), and the context it holds
grows with the conversation until compaction folds it. Written whole, each save re-encoded
and re-sent every message of the conversation; so the context is a Redis list of its own, one
message an item, next to the rest of the state (the head), and a save sends the head and the
messages that are new or changed (`Mailbox.save_state`, one Lua call under the lease).

What Redis holds is known from the load and from each write that succeeded, so nothing is read
back. A message is changed in place only while it is the last of the context (a user message
that takes the next blocks, a failed turn taken out), so the messages before the last one
written are compared by identity and only that last one by its encoding. A context replaced by
compaction shares no message with the saved one and is written anew.

Compaction starts only near the model's window (hundreds of kilobytes of JSON), so Redis
keeps only the context's recent turns: once its items pass `BUDGET` bytes, the oldest whole
turns move to SQL (`bot.store.cold_context`) until at most `LOW` bytes are left, the last turn
always kept whatever its size. The head then begins with a marker naming how many messages are
in SQL (`bot.mailbox.saved_state.ColdMark`). The move is written to SQL first, then Redis trims them
off and counts them in the marker, in one script under the lease: a worker dying between the
two leaves Redis as it was, and the rows it wrote are read by nobody. A load that finds the
marker reads those messages from SQL, as the exact JSON they were, so the context handed to
the model is the same, byte for byte. A context replaced (compaction, /new, retention's cut)
starts another epoch, and the replaced one's rows are deleted once Redis no longer names them.
Without a database (`cold` is None), or for `MOVE_PAUSE` after it refused a move, Redis keeps
the whole context: the hot state is bounded while the database takes the moves.

A state an older version saved whole under the head loads as it is, and its next save writes it
in this form. A write refused because Redis holds less than it should (lost data) is made again
in full.

Loading the context is the other cost that grew with it: every message parsed at every turn.
Each write names the state it wrote (a version, in Redis next to it), and the state a commit
wrote stays in this process for the session's next turn: the next load asks Redis for the
state only unless it is still that version, which it is whenever this worker ran the
session's last turn. The copy is handed out once, and kept again only by the next commit, so
a turn that failed half-way never leaves a changed copy behind. At most `KEPT` sessions are
kept, the most recently committed. Warm turns therefore read neither Redis's context nor SQL.
"""

from __future__ import annotations

import asyncio
import logging
import operator
import time
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import TypeAdapter

from bot.mailbox.inbox import Head, Mailbox
from bot.mailbox.saved_state import (
    ColdMark,
    ContextMissing,
    StateWrite,
    StoredState,
    TurnOptions,
    mark_of,
    marked,
)
from bot.store.cold_context import ColdContext, ColdContextMissing
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.messages import Message
from bot.vocabulary.state import SessionState, WrittenContext

log = logging.getLogger(__name__)
_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
_HEAD = {"messages"}  # what the head leaves out: the context has its own key
KEPT = 64  # sessions whose last committed state this process keeps for their next turn
BUDGET = 40 * 1024  # bytes of context items in Redis past which the oldest turns move to SQL
LOW = 24 * 1024  # what a move leaves in Redis, unless the last turn alone is larger
MOVE_PAUSE = 30.0  # s without moves after the database refused one: saves do not wait on it
READ_PAUSES = (0.5, 1.0, 2.0, 4.0, 8.0)  # s between reads of older messages that failed


@dataclass(frozen=True)
class _Plan:
    """One save: what Redis is sent, and what is stored once it succeeded. `replaced`: the
    context had older messages in SQL and was replaced, so those rows go after the write."""

    write: StateWrite
    stored: WrittenContext
    replaced: bool


class StateStore:
    def __init__(self, mailbox: Mailbox, cold: ColdContext | None = None) -> None:
        self.mailbox = mailbox
        self.cold = cold
        self._kept: OrderedDict[str, tuple[str, SessionState]] = OrderedDict()
        self._moves_after = 0.0  # no move before then: the database refused the last one

    async def load(self, session: str) -> SessionState | None:
        """The session's state, or None when Redis holds none."""
        version, kept = self._kept.pop(session, ("", None))
        stored = await self.mailbox.load_state(session, version)
        return await self._state_of(session, stored, kept)

    async def load_for_turn(self, session: str) -> tuple[SessionState | None, TurnOptions]:
        """`load`, with the options the turn runs with read in the same round trip."""
        version, kept = self._kept.pop(session, ("", None))
        stored, options = await self.mailbox.load_for_turn(session, version)
        return await self._state_of(session, stored, kept), options

    async def _state_of(
        self, session: str, stored: StoredState | None, kept: SessionState | None
    ) -> SessionState | None:
        if stored is not None and stored.unchanged and kept is not None:
            return kept
        if stored is None:
            return None
        mark = mark_of(stored.head)
        older = [] if mark is None else await self._older(session, mark)
        return decode(stored, older or [], mark if older is not None else None)

    def forget(self, session: str) -> None:
        """Drop the copy kept of `session`'s last state: it takes no next turn (a helper
        whose answer was read, `bot.session.helper_cleanup`)."""
        self._kept.pop(session, None)

    async def _older(self, session: str, mark: ColdMark) -> list[str] | None:
        """The context's older messages from SQL. A database that does not answer is asked
        again for a while (the turn waits, holding its lease), then the load fails and the
        turn is retried. Rows that are gone for good (a database restored from an older
        backup) cannot come back: the session goes on with Redis's recent turns (None)."""
        if self.cold is None:
            raise ColdContextMissing(f"{session}: older messages in SQL, and no database")
        pauses = iter(READ_PAUSES)
        while True:
            try:
                return await self.cold.read(session, mark.epoch, mark.count)
            except ColdContextMissing:
                log.error("%s: its older messages are gone from the database; it goes on "
                          "with its recent turns", session, exc_info=True)  # fmt: skip
                return None
            except Exception:
                pause = next(pauses, None)
                if pause is None:
                    raise
                log.warning("could not read the older messages of %s", session, exc_info=True)
                await asyncio.sleep(pause)

    async def save(self, session: str, token: str, state: SessionState) -> None:
        """Write what changed since the last write, under the lease (`LeaseLost` if gone)."""
        plan = await self._plan(session, token, state)
        try:
            await self.mailbox.save_state(session, token, plan.write)
        except ContextMissing:
            plan = await self._plan(session, token, state, whole=True)
            await self.mailbox.save_state(session, token, plan.write)
        await self._written(session, token, state, plan)

    async def commit(
        self,
        session: str,
        token: str,
        envelopes: Sequence[Envelope],
        state: SessionState,
        *,
        then: int = 0,
    ) -> Head | None:
        """Save the state and remove `envelopes` from the inbox, in one step; with `then`,
        the next turn's head comes back, or the lease is let go (`Mailbox.commit`)."""
        plan = await self._plan(session, token, state)
        try:
            head = await self.mailbox.commit(session, token, envelopes, plan.write, then=then)
        except ContextMissing:
            plan = await self._plan(session, token, state, whole=True)
            head = await self.mailbox.commit(session, token, envelopes, plan.write, then=then)
        await self._written(session, token, state, plan)
        self._kept[session] = (plan.write.version, state)
        while len(self._kept) > KEPT:
            self._kept.popitem(last=False)
        return head

    async def _plan(
        self, session: str, token: str, state: SessionState, *, whole: bool = False
    ) -> _Plan:
        """The save of `state`, with the turns that leave Redis already in SQL."""
        before = state._written
        keep = unchanged(state.messages, before)
        encoded = (before.encoded[:keep] if before else []) + [
            message.model_dump_json() for message in state.messages[keep:]
        ]
        sizes = (before.sizes[:keep] if before else []) + [len(e.encode()) for e in encoded[keep:]]
        if before is not None and keep >= before.cold:
            cold, epoch, replaced = before.cold, before.epoch, False
        else:  # nothing stored yet, or a context whose older part changed: another epoch
            cold, epoch, replaced = 0, "", before is not None and before.cold > 0
        movable = self.cold is not None and time.monotonic() >= self._moves_after
        moved = cut(state.messages, sizes, cold) if movable else cold
        if moved > cold:
            epoch = epoch or uuid.uuid4().hex
            moved = await self._move(session, token, (epoch, cold), encoded[cold:moved])
        if whole or before is None or keep < before.cold:
            items, drop = 0, 0  # Redis's list is written anew
        else:
            items = keep - before.cold
            drop = min(moved - cold, items)
        write = StateWrite(
            head=marked(state.model_dump_json(exclude=_HEAD), ColdMark(epoch=epoch, count=moved)),
            keep=items,
            drop=drop,
            append=tuple(encoded[max(moved, cold + items) :]),
            version=uuid.uuid4().hex,
        )
        stored = WrittenContext(list(state.messages), encoded, sizes, moved, epoch)
        return _Plan(write, stored, replaced)

    async def _move(
        self, session: str, token: str, where: tuple[str, int], bodies: list[str]
    ) -> int:
        """Put `bodies` in SQL after the `start` messages there; how many are there after."""
        assert self.cold is not None
        epoch, start = where
        try:
            await self.cold.put(session, epoch, start, bodies, fence_of(token))
        except Exception:
            log.warning("could not move older messages of %s to the database; Redis keeps "
                        "them for now", session, exc_info=True)  # fmt: skip
            self._moves_after = time.monotonic() + MOVE_PAUSE
            return start
        return start + len(bodies)

    async def _written(self, session: str, token: str, state: SessionState, plan: _Plan) -> None:
        """Remember what is stored now that the write succeeded; a replaced context's rows
        in SQL are named by nothing any more, and go."""
        state._written = plan.stored
        if plan.replaced and self.cold is not None:
            try:
                await self.cold.drop_others(session, plan.stored.epoch, fence_of(token))
            except Exception:
                log.warning("could not delete the replaced context of %s", session,
                            exc_info=True)  # fmt: skip


def started_over(state: SessionState) -> SessionState:
    """A new conversation in place of `state` (/new), keeping the runs the record has yet to
    take. What is stored of the old context is carried over, so that its first save knows
    to delete the old context's older part from SQL."""
    fresh = SessionState(unrecorded=state.unrecorded)
    fresh._written = state._written
    return fresh


def decode(
    stored: StoredState, older: Sequence[str] = (), mark: ColdMark | None = None
) -> SessionState:
    """The state of `stored`, its context led by the `older` messages SQL holds; one saved
    whole by an older version keeps its messages."""
    state = SessionState.model_validate_json(stored.head)
    if "messages" in state.model_fields_set:  # the whole state in the head
        return state
    recent = [item.decode() for item in stored.context]
    raw = [*older, *recent]
    state.messages = _MESSAGES.validate_json("[" + ",".join(raw) + "]")
    sizes = [len(item.encode()) for item in older] + [len(item) for item in stored.context]
    cold, epoch = (mark.count, mark.epoch) if mark is not None else (0, "")
    state._written = WrittenContext(list(state.messages), raw, sizes, cold, epoch)
    return state


def unchanged(messages: list[Message], before: WrittenContext | None) -> int:
    """How many of `messages`, from the first, are stored as they are now."""
    if before is None:
        return 0
    limit = min(len(before.messages), len(messages))
    same = list(map(operator.is_, messages[:limit], before.messages[:limit]))
    keep = same.index(False) if False in same else limit
    last = keep - 1
    if keep and messages[last].model_dump_json() != before.encoded[last]:
        keep = last  # the last message kept was changed in place
    return keep


def cut(messages: Sequence[Message], sizes: Sequence[int], cold: int) -> int:
    """How many of the context's first messages should be in SQL, `cold` of them already:
    none more while Redis's part is within `BUDGET`; else whole turns, oldest first, until
    at most `LOW` bytes are left, but never the last turn."""
    rest = sum(sizes[cold:])
    if rest <= BUDGET:
        return cold
    point = cold
    for index in range(cold + 1, len(messages)):
        if messages[index].starts_turn:
            rest -= sum(sizes[point:index])
            point = index
            if rest <= LOW:
                break
    return point


def fence_of(token: str) -> int:
    """The fence number a lease token begins with (`fence:worker:nonce`)."""
    return int(token.split(":", 1)[0])
