"""Decisions on tool calls that wait for a person: the confirmation a run asks for, and what
a press (or the expiry) then tells the suspended turn. Every decision is audited in the
record, whoever made it: a person, the expiry, or a new message that moved past the question.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass

from bot.redis.confirmations import CallSummary, Confirmations
from bot.session.record import quietly
from bot.session.watch import session_info
from bot.store.grants import Grants
from bot.store.history import History
from bot.telemetry import metrics
from bot.vocabulary import events as ev
from bot.vocabulary.chats import chat_of
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.state import SessionState

log = logging.getLogger(__name__)
EXPIRED = "Not run: nobody approved it before the request expired."
DENIED = "Denied by the user."


@dataclass(frozen=True)
class Decided:
    """What a decision tells the waiting calls: approved or not (call id → bool), the note
    a denied call's result carries, and the tools kept allowed for good ("Always allow")."""

    decisions: Mapping[str, bool]
    note: str
    granted: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Decisions:
    confirmations: Confirmations
    history: History
    grants: Grants | None  # None: "Always allow" approves the calls but is not kept
    schedule_expiry: Callable[[str, float], Awaitable[None]]
    ttl: float  # how long a request waits for a press

    async def ask(
        self, head: Envelope, state: SessionState, event: ev.ConfirmationRequired
    ) -> ev.ConfirmationRequired:
        """The confirmation for calls a run stopped at: kept in Redis for the press, audited,
        and due to expire; the event goes on to the chat with its id and deadline."""
        calls = [
            CallSummary(call_id=c.call_id, name=c.name, arguments=c.arguments) for c in event.calls
        ]
        confirmation = await self.confirmations.create(
            head.session, head.id, head.sender.id, calls, self.ttl,
            can_remember=event.can_remember, platform=head.platform, reply_to=head.reply_to,
        )  # fmt: skip
        if state.pending is not None:
            state.pending.confirmation_id = confirmation.id
        where = session_info(head)
        await quietly("audit", confirmation, lambda c: self.history.asked(where, c))
        await self.schedule_expiry(confirmation.id, self.ttl)
        update = {"confirmation_id": confirmation.id, "expires_at": confirmation.expires_at}
        return event.model_copy(update=update)

    async def decide(self, head: Envelope, state: SessionState, person: str) -> Decided | None:
        """What the decision `head` tells the turn waiting for it, which `person` asked for;
        None if the turn moved on before it came (decided too late)."""
        expired = head.kind == "expiry"
        outcome = "expired" if expired else "approved" if head.approve else "denied"
        metrics.CONFIRMATIONS.labels(outcome).inc()
        await self.audit(head.confirmation_id)
        pending = state.pending
        if pending is None or pending.confirmation_id != head.confirmation_id:
            return None
        decisions = {call_id: bool(head.approve) for call_id in pending.waiting}
        granted: frozenset[str] = frozenset()
        if head.approve and head.remember:
            names = {c.name for c in pending.calls if c.id in pending.waiting}
            if await self._grant(person, chat_of(head.session), names, head.sender.id):
                granted = frozenset(names)
        return Decided(decisions, EXPIRED if expired else DENIED, granted)

    async def decline_pending(self, state: SessionState, by: str) -> None:
        """A request nobody decided is declined when the conversation moves past it."""
        if state.pending is not None and state.pending.confirmation_id:
            await self.confirmations.decide(
                state.pending.confirmation_id, "declined", by, is_admin=True
            )
            await self.audit(state.pending.confirmation_id)

    async def audit(self, confirmation_id: str | None) -> None:
        """The approvals audit learns who decided (a person, the expiry, a new message)."""
        confirmation = await self.confirmations.get(confirmation_id or "")
        if confirmation is not None:
            await quietly("audit the decision on", confirmation, self.history.decided)

    async def _grant(self, person: str, chat: str, tools: Collection[str], by: str) -> bool:
        """Keep an "Always allow": `person` may run `tools` in `chat` from now on, this turn
        included (True once kept). A database that cannot take it costs the grant, not the
        turn: the approved calls still run, and are asked about again next time."""
        if self.grants is None:
            return False
        try:
            await self.grants.add(person, chat, tools, by)
        except Exception:
            log.warning("could not keep what %s allowed in %s", person, chat, exc_info=True)
            return False
        return True
