"""Which envelopes at the head of a session's inbox make the next turn.

Most often the head and the plain messages its sender wrote right after it, answered as one
(`merged_group`). After a crash, the inbox may start with a turn that already ended but was
not committed (`finished_group`: commit it, never answer it again) or one a dead worker left
half done (`resumed_group`: continue it).
"""

from __future__ import annotations

from bot.vocabulary.envelope import Envelope
from bot.vocabulary.state import SessionState


def finished_group(batch: list[Envelope], state: SessionState) -> list[Envelope]:
    """The envelopes of the last run, if they are still queued: the run ended and saved, but
    its worker died before the commit. They must not be answered again."""
    ids = state.finished
    if not ids or [envelope.id for envelope in batch[: len(ids)]] != ids:
        return []
    return batch[: len(ids)]


def resumed_group(batch: list[Envelope], state: SessionState) -> list[Envelope]:
    """The envelopes of a turn a dead worker left half done, if the inbox starts with them."""
    turn = state.turn
    if turn is None or state.pending is not None or not turn.envelope_ids:
        return []
    ids = turn.envelope_ids
    if [envelope.id for envelope in batch[: len(ids)]] != ids:
        return []
    return batch[: len(ids)]


def merged_group(batch: list[Envelope]) -> list[Envelope]:
    """The head, plus the plain messages right after it from the same sender."""
    head = batch[0]
    group = [head]
    if not head.is_plain:
        return group
    for envelope in batch[1:]:
        if not envelope.is_plain or envelope.sender.id != head.sender.id:
            break
        group.append(envelope)
    return group
