"""Deciding a press of an approval button, the same on every platform, the HTTP API's
decisions included.

The first decision wins in Redis (see `bot.redis.confirmations`); only the person who asked or an
admin may decide, anyone else is told so and changes nothing. A decision goes into the
session's mailbox, so the turn resumes in order with the other messages; its envelope id is
the dedup key, so a press delivered again (the platform retries because Redis failed after
the decision was made) queues it again safely and resumes the turn once.

What comes back is only what to show: the answer to the press and the prompt's new state.
How to answer a press and edit a prompt is each platform's own business. The HTTP API answers
with a status code instead of words, so it takes the two steps `decide` makes, `claim` and
`queue`, and says what their outcome means itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.mailbox.inbox import Mailbox
from bot.redis.confirmations import Confirmation, Confirmations, Outcome, Status
from bot.vocabulary.envelope import Envelope, Sender, decision_id
from bot.vocabulary.helpers import is_helper

Choice = Literal["approve", "deny", "remember"]
FORBIDDEN = "Only the person who asked, or an admin, can decide this."
DECIDED = {"approved": "Approved.", "denied": "Denied."}
ANSWERS = {
    "expired": "This request has expired; nothing was run.",
    "approved": "This was already approved.",
    "denied": "This was already denied.",
    "declined": "A newer message replaced this request; nothing was run.",
    "withdrawn": "The helper that asked for this was stopped; nothing was run.",
    "unknown": "This request is no longer available.",
}


@dataclass(frozen=True)
class Press:
    """One press: which request, which button, by whom, on which platform.

    `own_only`: the presser decides only what they asked for themselves, admin or not. The
    HTTP API's caller is an admin to the tools, but a request is its asker's to decide."""

    confirmation_id: str
    choice: Choice
    person: Sender
    platform: str
    own_only: bool = False

    @property
    def status(self) -> Status:
        """What the press decides: a denial, or an approval (remembered or not)."""
        return "denied" if self.choice == "deny" else "approved"

    @property
    def overrules(self) -> bool:
        """Whether this press may decide a request someone else made."""
        return self.person.is_admin and not self.own_only


@dataclass(frozen=True)
class Claim:
    """What deciding a request came to in Redis: the outcome (`ok` when this press decided
    it), and the request as it was read first, None when there is none."""

    outcome: Outcome
    confirmation: Confirmation | None


@dataclass(frozen=True)
class PromptState:
    """What the prompt says from now on, instead of its buttons.

    `status` is what `approvals.outcome_line` shows ("remembered" for an approval that is
    remembered too); `decided_by` is the decider's person id, and `by_presser` says that
    this very press decided it, so a platform may name the presser as it knows them.
    """

    status: str
    decided_by: str
    by_presser: bool


@dataclass(frozen=True)
class PressAnswer:
    """The answer to a press; an alert is for a press that changed nothing."""

    text: str
    alert: bool
    prompt: PromptState | None


async def decide(press: Press, confirmations: Confirmations, mailbox: Mailbox) -> PressAnswer:
    """Decide `press` if it may, queue the decision, and say what to show."""
    claimed = await claim(press, confirmations)
    if claimed.outcome == "forbidden":
        return PressAnswer(FORBIDDEN, alert=True, prompt=None)
    if claimed.outcome != "ok" or claimed.confirmation is None:
        return await _already_decided(press, claimed.outcome, confirmations, mailbox)
    await queue(press, claimed.confirmation, mailbox)
    shown = "remembered" if press.choice == "remember" else press.status
    state = PromptState(shown, press.person.id, by_presser=True)
    return PressAnswer(DECIDED[press.status], alert=False, prompt=state)


async def claim(press: Press, confirmations: Confirmations) -> Claim:
    """Decide the request `press` is about, if the presser may and nobody did first."""
    confirmation = await confirmations.get(press.confirmation_id)
    if confirmation is None:
        return Claim("unknown", None)
    outcome = await confirmations.decide(
        press.confirmation_id, press.status, press.person.id, is_admin=press.overrules
    )
    return Claim(outcome, confirmation)


async def queue(
    press: Press, confirmation: Confirmation, mailbox: Mailbox, status: Status | None = None
) -> Envelope:
    """Queue the decision `press` made on `confirmation` (`status`: what it came to, if not
    the press's own: a question's answers), for its turn to resume."""
    made = status or press.status
    envelope = decision(confirmation, press.person, press.choice, made, press.platform)
    await mailbox.submit(envelope)
    return envelope


async def _already_decided(
    press: Press, outcome: str, confirmations: Confirmations, mailbox: Mailbox
) -> PressAnswer:
    """A press that came after the request was decided, or for one that is gone."""
    current = await confirmations.get(press.confirmation_id)
    status_now = current.status if current is not None else "unknown"
    answer = already(status_now, outcome)
    if current is None or current.status == "pending":
        return PressAnswer(answer, alert=True, prompt=None)
    if current.status in ("approved", "denied"):
        # Decided, but perhaps never queued (Redis failed after the decision and this is the
        # platform's redelivery): queueing again is safe, the envelope id is the dedup key.
        # It is the decider's decision, whoever pressed now: another person's press names
        # the decider and cannot add "always allow" to it.
        person, choice = press.person, press.choice
        if current.decided_by != person.id:
            person = Sender(id=current.decided_by or "")
            choice = "deny" if current.status == "denied" else "approve"
        await mailbox.submit(decision(current, person, choice, current.status, press.platform))
    state = PromptState(current.status, current.decided_by or "", by_presser=False)
    return PressAnswer(answer, alert=True, prompt=state)


def already(status: str, outcome: str) -> str:
    """The answer to a press that came after the request was decided (or is unknown)."""
    return ANSWERS.get(status) or ANSWERS.get(outcome) or f"Already {status}."


def decision(
    confirmation: Confirmation, person: Sender, choice: str, status: Status, platform: str
) -> Envelope:
    """The decision for the session's mailbox; its id is the dedup key, so a press delivered
    twice, or queued again after a failure, resumes the turn once. It is answered where it
    was made: where the request was asked (`reply_to`) means nothing to another platform
    (the HTTP API deciding a request its task's run asked in a chat). A helper's run answers
    into its own stream wherever its prompt was pressed."""
    if is_helper(confirmation.session):
        platform = confirmation.platform
    same_platform = platform == confirmation.platform
    return Envelope(
        id=decision_id(confirmation.id),
        session=confirmation.session,
        kind="decision",
        sender=person,
        platform=platform,
        confirmation_id=confirmation.id,
        approve=status == "approved",
        remember=choice == "remember",
        reply_to=confirmation.reply_to if same_platform else {},
    )
