"""A session's state in Redis, written as it changes: a turn's save costs what the turn added.

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

A state an older version saved whole under the head loads as it is, and its next save writes it
in this form. A write refused because Redis holds less than it should (lost data) is made again
in full.

Loading the context is the other cost that grew with it: every message parsed at every turn.
Each write names the state it wrote (a version, in Redis next to it), and the state a commit
wrote stays in this process for the session's next turn: the next load asks Redis for the
state only unless it is still that version, which it is whenever this worker ran the
session's last turn. The copy is handed out once, and kept again only by the next commit, so
a turn that failed half-way never leaves a changed copy behind. At most `KEPT` sessions are
kept, the most recently committed.
"""

from __future__ import annotations

import operator
import uuid
from collections import OrderedDict
from collections.abc import Sequence

from pydantic import TypeAdapter

from bot.agent.state import SessionState, WrittenContext
from bot.envelope import Envelope
from bot.mailbox import Mailbox
from bot.messages import Message
from bot.saved_state import ContextMissing, StateWrite, StoredState

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
_HEAD = {"messages"}  # what the head leaves out: the context has its own key
KEPT = 64  # sessions whose last committed state this process keeps for their next turn


class StateStore:
    def __init__(self, mailbox: Mailbox) -> None:
        self.mailbox = mailbox
        self._kept: OrderedDict[str, tuple[str, SessionState]] = OrderedDict()

    async def load(self, session: str) -> SessionState | None:
        """The session's state, or None when Redis holds none."""
        version, kept = self._kept.pop(session, ("", None))
        stored = await self.mailbox.load_state(session, version)
        if stored is not None and stored.unchanged and kept is not None:
            return kept
        return None if stored is None else decode(stored)

    async def save(self, session: str, token: str, state: SessionState) -> None:
        """Write what changed since the last write, under the lease (`LeaseLost` if gone)."""
        write = changes(state)
        try:
            await self.mailbox.save_state(session, token, write)
        except ContextMissing:
            write = changes(state, whole=True)
            await self.mailbox.save_state(session, token, write)
        written(state, write)

    async def commit(
        self, session: str, token: str, envelopes: Sequence[Envelope], state: SessionState
    ) -> None:
        """Save the state and remove `envelopes` from the inbox, in one step (`Mailbox.commit`)."""
        write = changes(state)
        try:
            await self.mailbox.commit(session, token, envelopes, write)
        except ContextMissing:
            write = changes(state, whole=True)
            await self.mailbox.commit(session, token, envelopes, write)
        written(state, write)
        self._kept[session] = (write.version, state)
        while len(self._kept) > KEPT:
            self._kept.popitem(last=False)


def decode(stored: StoredState) -> SessionState:
    """The state of `stored`; one saved whole by an older version keeps its messages."""
    state = SessionState.model_validate_json(stored.head)
    if "messages" in state.model_fields_set:  # the whole state in the head
        return state
    raw = [item.decode() for item in stored.context]
    state.messages = _MESSAGES.validate_json("[" + ",".join(raw) + "]")
    state._written = WrittenContext(list(state.messages), raw)
    return state


def changes(state: SessionState, *, whole: bool = False) -> StateWrite:
    """What to write so that Redis holds `state`: the head, and the context from the first
    message that differs from what was written before (all of it with `whole`)."""
    head = state.model_dump_json(exclude=_HEAD)
    before = None if whole else state._written
    messages, keep = state.messages, 0
    if before is not None:
        limit = min(len(before.messages), len(messages))
        same = list(map(operator.is_, messages[:limit], before.messages[:limit]))
        keep = same.index(False) if False in same else limit
        last = keep - 1
        if keep and messages[last].model_dump_json() != before.encoded[last]:
            keep = last  # the last message kept was changed in place
    fresh = tuple(message.model_dump_json() for message in messages[keep:])
    return StateWrite(head=head, keep=keep, append=fresh, version=uuid.uuid4().hex)


def written(state: SessionState, write: StateWrite) -> None:
    """Remember what Redis holds now that `write` succeeded."""
    before = state._written
    encoded = before.encoded[: write.keep] if before is not None else []
    state._written = WrittenContext(list(state.messages), [*encoded, *write.append])
