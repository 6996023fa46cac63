"""Messages that join a running turn at a model boundary (`bot.vocabulary.steering`).

The loop asks between steps, after a model call's tools have answered and before the next
call: whatever its person wrote meanwhile comes in then, each message as a turn's first one
does (the time it was sent, its files, its text), after the tool results in the same user
message, so roles still alternate and the next call reads it. The turn takes the messages'
envelopes on (`TurnProgress.envelope_ids`) and is saved at once: a worker that dies after
that goes on with them, one that dies before leaves them queued, to join or start a turn
again. Nothing is lost or answered twice, since the mailbox commits a turn's envelopes
together.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Protocol

from bot.agent.prompt import PromptBuilder
from bot.tools.base import ToolContext
from bot.vocabulary import events as ev
from bot.vocabulary.envelope import Envelope
from bot.vocabulary.messages import DocumentBlock, ImageBlock, TextBlock
from bot.vocabulary.state import SessionState

Block = TextBlock | ImageBlock | DocumentBlock


class Joining(Protocol):
    """Where a turn finds the messages that join it (`bot.session.steering`)."""

    async def take(self) -> Sequence[Envelope]:
        """The messages waiting behind the turn that join it now, in order; none: []."""
        ...


def said(envelope: Envelope, ctx: ToolContext) -> list[Block]:
    """A joining message as the model reads it: when it was sent, its files, its text."""
    sent = datetime.fromtimestamp(envelope.received_at, UTC)
    files: list[Block] = [
        ImageBlock(file=ref) if ref.is_image else DocumentBlock(file=ref)
        for ref in envelope.attachments
    ]
    text = [TextBlock(text=envelope.text)] if envelope.text else []
    return [TextBlock(text=PromptBuilder.stamp(ctx, sent)), *files, *text]


def taken_in(state: SessionState, joined: Sequence[Envelope], ctx: ToolContext) -> ev.Joined:
    """Put `joined` in the state's context and its turn; the event that says so."""
    for envelope in joined:
        state.add_user(*said(envelope, ctx))
    if state.turn is not None:
        state.turn.envelope_ids += [envelope.id for envelope in joined]
    text = "\n".join(envelope.text for envelope in joined if envelope.text)
    return ev.Joined(envelope_ids=[envelope.id for envelope in joined], text=text)
