"""The envelopes a session runs that are not messages for the model: a command (`/new`,
`/compact`, `paired`: a person an admin just paired is told they are in, or a `notice` the
worker queued for the chat: a task's run did not run, over its daily cap), and a message
given up on after it crashed workers too often. All answer in the chat, and all run in order
with the messages around them, under the session's lease, so none races a turn.

`/compact` folds all but the last turns into a summary now, whatever the budget, with the
compactor the turns use (`Compactor.compact(force=True)`), written by the session's own model
(`/model`) or the default. Its figures are the conversation's messages alone, estimated as
compaction estimates them: the system prompt and the tools, which no compaction shrinks, are
not in them. The runner saves the state it returns; the next run's record writes the context
from `state.recorded` on, as after a compaction the budget made, so the record keeps the turns
as they were said. A summary the model did not write changes nothing, and the person is told
so.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from bot.agent.compaction import Compaction, Compactor
from bot.mailbox.inbox import Mailbox
from bot.people.pairing import PAIRED_COMMAND, WELCOME
from bot.session.decisions import Decisions
from bot.session.egress import Egress
from bot.session.record import Recorder, quietly
from bot.session.states import started_over
from bot.session.watch import session_info
from bot.telemetry import metrics
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.runs import RunRecord
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage

log = logging.getLogger(__name__)
POISONED = "Sorry, I could not process that message (it failed {n} times), so I skipped it."
FRESH_START = "Started a new conversation: I have forgotten what we said before."
SKIPPED = "Not run: the message was skipped after repeated failures."
# A command the worker queues itself (never a person: the platforms queue only commands of
# their own fixed names): its text after this word is posted in the chat as it is.
NOTICE = "notice"
COMPACT_COMMAND = "compact"
COMPACTED = "Compacted the conversation: about {before} → {after} tokens ({folded} summarised)."
SHORT = "Nothing to compact yet: the conversation is short."
UNSUMMARISED = (
    "I could not compact the conversation: the model did not write the summary, so I left "
    "it as it was."
)


@dataclass(frozen=True)
class Commands:
    mailbox: Mailbox
    egress: Egress
    decisions: Decisions
    recorder: Recorder
    default_model: str  # what a skipped message's record names, and who writes summaries
    compactor: Compactor  # the turns' own (`AgentDeps.compactor`), for /compact

    async def run(
        self, head: Envelope, state: SessionState, model: str | None = None
    ) -> SessionState:
        """The session's state after the command `head`; `model` is the session's own
        (`/model`), None for the default."""
        if head.text == PAIRED_COMMAND:
            await say(self.egress, head, ev.TextDelta(text=WELCOME), ev.FinishReason.END_TURN)
            return state
        if head.text.startswith(f"{NOTICE} "):
            said = head.text.removeprefix(f"{NOTICE} ")
            await say(self.egress, head, ev.TextDelta(text=said), ev.FinishReason.END_TURN)
            return state
        if head.text == COMPACT_COMMAND:
            await self.compact(head, state, model or self.default_model)
            return state
        if head.text != "new":
            log.warning("unknown session command %r in %s", head.text, head.session)
            return state
        await self.decisions.decline_pending(state, head.sender.id)
        await say(self.egress, head, ev.TextDelta(text=FRESH_START), ev.FinishReason.END_TURN)
        await quietly("forget the context of", head.session, self.recorder.history.reset)
        # the record keeps the totals for /usage, also of runs it has yet to take
        return started_over(state)

    async def compact(self, head: Envelope, state: SessionState, model: str) -> None:
        """/compact: the older turns of `state` folded into a summary `model` writes, and the
        person told what it saved (see the module doc)."""
        result = await self.compactor.compact(state.messages, 0, model, force=True)
        if result is None:
            await say(self.egress, head, ev.TextDelta(text=SHORT), ev.FinishReason.END_TURN)
            return
        if not result.summarized:
            log.warning("/compact in %s: %s wrote no summary", head.session, model)
            await say(self.egress, head, ev.Error(message=UNSUMMARISED))
            return
        state.messages = result.messages
        metrics.COMPACTIONS.inc()
        await say(self.egress, head, ev.TextDelta(text=compacted(result)), ev.FinishReason.END_TURN)

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


def notice(about: Envelope, text: str) -> Envelope:
    """A `notice` command saying `text` where `about` is answered, once per `about`: its id
    is the mailbox's dedup key."""
    return Envelope(
        id=f"{NOTICE}:{about.id}"[:200],
        session=about.session,
        kind="command",
        text=f"{NOTICE} {text}",
        sender=about.sender,
        platform=about.platform,
        chat_kind=about.chat_kind,
        reply_to=about.reply_to,
    )


def compacted(result: Compaction) -> str:
    """What /compact says it did, in round figures: they are estimates."""
    folded = "1 earlier message" if result.folded == 1 else f"{result.folded} earlier messages"
    return COMPACTED.format(
        before=about(result.tokens_before), after=about(result.tokens_after), folded=folded
    )


def about(tokens: int) -> str:
    """`tokens` to two or three significant figures, with thousands separated."""
    if tokens < 100:
        return str(tokens)
    return f"{round(tokens, -1 if tokens < 1000 else -2):,}"


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
