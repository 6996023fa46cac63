"""Retention in live contexts: what an active session's context holds from before the window
goes, cut at a turn's start while no turn runs there.

Retention deletes the record's rows older than PARLEY_RETENTION_DAYS (`bot.store.archive`),
but a session still in use keeps its context in its hot state (`bot.session.states`), its
recent turns in Redis and its older ones in SQL, and the model reads all of it at every
turn: the same window must hold there. Each message carries when it was said (`Message.at`,
which the record's `created_at` is made from); a summary is dated by the oldest turn it
folds (`bot.agent.compaction`), since what it says was said then.

The cut is a prefix of the context that ends where a turn starts (a user message without
tool results), so no tool call is left without its result, and a summary is never kept
apart from the turns that followed it: it stands for everything before them, and goes with
the first of them. A turn waiting for a decision keeps its messages; only those before its
start may go.

It is made like a turn's save: under the session's lease, taken only while nothing runs or
waits there, checked in the same Lua step (`Mailbox.take_idle_lease`), so the context is
never changed under a turn, and every write, in Redis and in SQL, is fenced as a turn's is.
A message that comes meanwhile waits for the cut and is then handed on at once. To find the
sessions that have something to cut, only the context's first two messages are read: the
oldest is first, or second behind a summary written before summaries were dated so.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence

from bot.mailbox.inbox import LeaseLost, Mailbox
from bot.mailbox.saved_state import mark_in
from bot.session.states import StateStore
from bot.store.cold_context import ColdContext, ColdContextMissing
from bot.vocabulary.messages import Message
from bot.vocabulary.state import SessionState

log = logging.getLogger(__name__)
FIRST = 2  # the context's messages looked at to tell whether any is older than the window


def cut_point(messages: Sequence[Message], before: float, limit: int | None = None) -> int:
    """How many of `messages`, from the first, to cut so that none said before `before` is
    left: up to the start of the first turn after the last such message, or all of them.
    Never more than `limit`: when that falls short, as many as may go."""
    old = [index for index, message in enumerate(messages) if message.at < before]
    if not old:
        return 0
    end = len(messages) if limit is None else min(limit, len(messages))
    points = [
        index
        for index in range(1, end + 1)
        if index == len(messages) or messages[index].starts_turn
    ]
    after = [index for index in points if index > old[-1]]
    if after:
        return after[0]
    return points[-1] if points else 0


def turn_limit(state: SessionState) -> int | None:
    """How far a cut may go: a turn in flight (waiting for a decision) keeps what it added,
    from the message its question went into; with no mark of it, nothing may go."""
    turn = state.turn
    if turn is None:
        return None
    if turn.start is None:
        return 0
    found = (i for i, message in enumerate(state.messages) if message.id == turn.start.message)
    return next(found, 0)


class ContextRetention:
    """Cuts sessions' live contexts to the window. `worker`: the liveness id of the worker
    it runs in, which names the leases it takes, so the sweep frees them if it dies. Its
    state store is its own: the runner's keeps its sessions' last states for their turns."""

    def __init__(
        self, mailbox: Mailbox, cold: ColdContext, lease_ttl: float, worker: str = ""
    ) -> None:
        self.mailbox = mailbox
        self.cold = cold
        self.states = StateStore(mailbox, cold)
        self.lease_ttl = lease_ttl
        self.worker = worker

    async def cut(self, session: str, before: float) -> int:
        """Cut what `session`'s context holds from before `before` (a Unix time); how many
        messages went. None go while the session is busy: the next pass takes them."""
        oldest = await self.oldest(session)
        if oldest is None or oldest >= before:
            return 0
        token = await self.mailbox.take_idle_lease(session, self.lease_ttl, worker=self.worker)
        if token is None:
            return 0
        try:
            return await self._cut(session, token, before)
        except LeaseLost:  # it outlasted its lease: whoever holds it now kept everything
            log.warning("retention: lost the lease on %s while cutting its context", session)
            return 0
        finally:
            await self._let_go(session, token)

    async def oldest(self, session: str) -> float | None:
        """When the context's oldest message was said, from its first ones; None without
        a context. Reads the start of the state, and of its older part in SQL if any."""
        first = await self.mailbox.first_of_state(session, FIRST)
        if first is None:
            return None
        if first.whole:  # saved whole by an older version: read as it is
            state = await self.states.load(session)
            return min((m.at for m in state.messages), default=None) if state else None
        mark = mark_in(first.head)
        bodies: list[str | bytes] = []
        if mark is not None and mark.count:
            # rows gone for good: the session goes on with Redis's part (`StateStore.load`)
            with contextlib.suppress(ColdContextMissing):
                bodies += await self.cold.read(session, mark.epoch, min(FIRST, mark.count))
        bodies += first.context
        said = [Message.model_validate_json(body).at for body in bodies[:FIRST]]
        return min(said, default=None)

    async def _cut(self, session: str, token: str, before: float) -> int:
        state = await self.states.load(session)
        if state is None:
            return 0
        cut = cut_point(state.messages, before, turn_limit(state))
        if cut == 0:
            return 0
        state.messages = state.messages[cut:]
        if not state.messages:  # the message that waited for its answer went too
            state.unanswered = False
        await self.states.save(session, token, state)
        return cut

    async def _let_go(self, session: str, token: str) -> None:
        """Release the lease, or hand the session to a message that came meanwhile: its
        drain job found the lease held and ended, so it is woken again."""
        if await self.mailbox.release_if_empty(session, token) is False:
            await self.mailbox.release(session, token)
            await self.mailbox.wake(session)
