"""Decisions on tool calls that wait for a person: the confirmation a run asks for, and what
a press (or the expiry) then tells the suspended turn. Every decision is audited in the
record, whoever made it: a person, the expiry, or a new message that moved past the question.

An `ask_user` question is answered rather than approved: by presses, by the API, or by the
asker's next message in the chat (`typed`), which answers the questions still open in their
own words. That message claims the answer in Redis like a press, so a press and a typed
reply never both answer; whichever came first wins, and the other is not lost: a message
that lost to a press goes on as a message, after the press's answers.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass

from bot.redis.confirmations import CallSummary, Confirmation, Confirmations
from bot.session.record import quietly
from bot.session.watch import session_info
from bot.store.grants import Grants
from bot.store.history import History
from bot.telemetry import metrics
from bot.tools import ask_user
from bot.vocabulary import events as ev
from bot.vocabulary.chats import chat_of
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.questions import ANSWER_CHARS, Answer, answered_text
from bot.vocabulary.state import SessionState

log = logging.getLogger(__name__)
EXPIRED = (
    "Not run: no decision was made before the request expired (nobody approved or denied "
    "it). Ask the person again if it is still needed."
)
DENIED = "Denied by the user."
Show = Callable[[Confirmation], Awaitable[None]]


async def _unseen(confirmation: Confirmation) -> None:
    """Nothing to show (a worker without platforms, tests)."""


@dataclass(frozen=True)
class Decided:
    """What a decision tells the waiting calls: approved or not (call id → bool), the note
    a denied call's result carries, the tools kept allowed for good ("Always allow"), and
    the results of waiting `ask_user` calls (`answers`)."""

    decisions: Mapping[str, bool]
    note: str
    granted: frozenset[str] = frozenset()
    answers: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Typed:
    """A message from the asker while their question waited: the answers it settles the
    question with, and whether the message was the answer itself (`whole`) or must still
    be taken in as a message (a press had answered first)."""

    answers: Mapping[str, str]
    whole: bool


@dataclass(frozen=True)
class Decisions:
    confirmations: Confirmations
    history: History
    grants: Grants | None  # None: "Always allow" approves the calls but is not kept
    schedule_expiry: Callable[[str, float], Awaitable[None]]
    ttl: float  # how long a request waits for a press, unless its policy rule says
    show: Show = _unseen  # make a prompt show how its confirmation ended (the egress)

    async def ask(
        self, head: Envelope, state: SessionState, event: ev.ConfirmationRequired
    ) -> ev.ConfirmationRequired:
        """The confirmation for calls a run stopped at: kept in Redis for the press, audited,
        and due to expire; the event goes on to the chat with its id and deadline."""
        calls = [
            CallSummary(call_id=c.call_id, name=c.name, arguments=c.arguments) for c in event.calls
        ]
        asker = state.turn.person if state.turn and state.turn.person else head.sender
        ttl = event.timeout or self.ttl
        confirmation = await self.confirmations.create(
            head.session, head.id, asker.id, calls, ttl,
            can_remember=event.can_remember, platform=head.platform, reply_to=head.reply_to,
            questions=event.questions, requester_name=asker.name,
        )  # fmt: skip
        if state.pending is not None:
            state.pending.confirmation_id = confirmation.id
        where = session_info(head)
        await quietly("audit", confirmation, lambda c: self.history.asked(where, c))
        await self.schedule_expiry(confirmation.id, ttl)
        update = {
            "confirmation_id": confirmation.id,
            "expires_at": confirmation.expires_at,
            "requester": confirmation.requester,
        }
        return event.model_copy(update=update)

    async def decide(self, head: Envelope, state: SessionState, person: str) -> Decided | None:
        """What the decision `head` tells the turn waiting for it, which `person` asked for;
        None if the turn moved on before it came (decided too late)."""
        expired = head.kind == "expiry"
        confirmation = await self.confirmations.get(head.confirmation_id or "")
        asked = confirmation is not None and confirmation.is_question
        metrics.CONFIRMATIONS.labels(_outcome(expired, asked, bool(head.approve))).inc()
        await self._audit(confirmation)
        pending = state.pending
        if pending is None or pending.confirmation_id != head.confirmation_id:
            return None
        if confirmation is not None and confirmation.is_question:
            return Decided({}, EXPIRED, answers=_answers(confirmation, pending.waiting))
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
            confirmation = await self.confirmations.get(state.pending.confirmation_id)
            await self._audit(confirmation)
            if confirmation is not None and confirmation.is_question:  # no button stays
                await quietly("show the question set aside in", confirmation, self.show)

    async def typed(self, group: list[Envelope], state: SessionState) -> Typed | None:
        """The asker's messages `group` while their question waits: they answer it in their
        own words (first claimed in Redis, as a press is), or, when a press answered first,
        its answers settle the question before the messages are taken in. None: no
        question waits, or these messages are not its answer (another person's, or the
        question is gone): they go on as messages, and the question is set aside."""
        pending, head = state.pending, group[0]
        if pending is None or not pending.confirmation_id or not head.is_plain:
            return None
        confirmation = await self.confirmations.get(pending.confirmation_id)
        if confirmation is None or not confirmation.is_question:
            return None
        text = "\n".join(envelope.text for envelope in group if envelope.text)[:ANSWER_CHARS]
        if confirmation.status == "pending" and text:
            open_ = len(confirmation.questions) - len(confirmation.answers)
            said = [Answer(text=text, other=True)] * open_
            person = head.sender
            await self.confirmations.answer(
                confirmation.id, said, person.id, start=len(confirmation.answers),
                via=head.id, name=person.name,
            )  # fmt: skip
            confirmation = await self.confirmations.get(confirmation.id)
        if confirmation is None or confirmation.status != "answered":
            return None
        whole = confirmation.via == head.id
        if whole:
            metrics.CONFIRMATIONS.labels("answered").inc()
            await self._audit(confirmation)
            await quietly("show the answer to", confirmation, self.show)
        return Typed(_answers(confirmation, pending.waiting), whole)

    async def audit(self, confirmation_id: str | None) -> None:
        """The approvals audit learns who decided (a person, the expiry, a new message)."""
        await self._audit(await self.confirmations.get(confirmation_id or ""))

    async def _audit(self, confirmation: Confirmation | None) -> None:
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


def _outcome(expired: bool, asked: bool, approved: bool) -> str:
    """The label the metric counts a decision under."""
    if expired:
        return "expired"
    if asked:
        return "answered"
    return "approved" if approved else "denied"


def _answers(confirmation: Confirmation, waiting: Collection[str]) -> dict[str, str]:
    """What the waiting `ask_user` call's result says: the answers, or that none came (the
    answers given before the time ran out included)."""
    if confirmation.status == "answered":
        by = confirmation.decided_name  # as their platform shows them; else "The person"
        said = answered_text(confirmation.questions, confirmation.answers, by, complete=True)
    elif confirmation.answers:
        partly = answered_text(confirmation.questions, confirmation.answers, "", complete=False)
        said = f"{ask_user.NO_ANSWER}\n{partly}"
    else:
        said = ask_user.NO_ANSWER
    return dict.fromkeys(waiting, said)
