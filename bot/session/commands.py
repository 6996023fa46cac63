"""The envelopes a session runs that are not messages for the model: a command (`/new`, or
`paired`: a person an admin just paired is told they are in), and a message given up on after
it crashed workers too often. All answer in the chat, and all run in order with the messages
around them."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from bot.mailbox.inbox import Mailbox
from bot.people.pairing import PAIRED_COMMAND, WELCOME
from bot.session.decisions import Decisions
from bot.session.egress import Egress
from bot.session.record import Recorder, quietly
from bot.session.states import started_over
from bot.session.watch import session_info
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.runs import RunRecord
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage

log = logging.getLogger(__name__)
POISONED = "Sorry, I could not process that message (it failed {n} times), so I skipped it."
FRESH_START = "Started a new conversation: I have forgotten what we said before."
SKIPPED = "Not run: the message was skipped after repeated failures."


@dataclass(frozen=True)
class Commands:
    mailbox: Mailbox
    egress: Egress
    decisions: Decisions
    recorder: Recorder
    default_model: str  # what a skipped message's record names

    async def run(self, head: Envelope, state: SessionState) -> SessionState:
        """The session's state after the command `head`."""
        if head.text == PAIRED_COMMAND:
            await say(self.egress, head, ev.TextDelta(text=WELCOME), ev.FinishReason.END_TURN)
            return state
        if head.text != "new":
            log.warning("unknown session command %r in %s", head.text, head.session)
            return state
        await self.decisions.decline_pending(state, head.sender.id)
        await say(self.egress, head, ev.TextDelta(text=FRESH_START), ev.FinishReason.END_TURN)
        await quietly("forget the context of", head.session, self.recorder.history.reset)
        # the record keeps the totals for /usage, also of runs it has yet to take
        return started_over(state)

    async def skip(self, head: Envelope, state: SessionState, failures: int) -> None:
        """Give up on an envelope that keeps crashing workers, so the session can go on: it
        goes to the dead letters, the person is told, and the record says so."""
        await self.mailbox.dead_letter(head, f"failed {failures} times")
        await say(self.egress, head, ev.Error(message=POISONED.format(n=failures)))
        state.close_unanswered(SKIPPED)
        state.turn = None
        now = time.time()
        record = RunRecord(
            where=session_info(head),
            envelope_ids=[head.id],
            trigger=ev.Trigger.SKIPPED,
            sender=head.sender.id,
            model=self.default_model,
            finish_reason=ev.FinishReason.POISONED,
            iterations=0,
            usage=Usage(),
            started_at=now,
            finished_at=now,
            error=f"skipped after {failures} failures",
        )
        await self.recorder.record(state, record)


async def say(
    egress: Egress,
    envelope: Envelope,
    event: ev.AgentEvent,
    finish: ev.FinishReason = ev.FinishReason.ERROR,
) -> None:
    """One event shown in reply to `envelope`, as a whole turn of its own."""
    stream = egress.open([envelope])
    try:
        await stream.send(event)
        await stream.send(ev.Completed(finish_reason=finish, iterations=0, usage=Usage()))
    finally:
        await stream.close()
