"""What the record is told about a run when it ends, kept apart from `history` so that a
session's state can hold the runs the database has not taken yet."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from bot.vocabulary.ran_with import RanWith
from bot.vocabulary.trace import Trace
from bot.vocabulary.usage import Usage

RUN_IDS = uuid.UUID("5d1c7c55-5f0e-4a43-9a57-7061726c6579")


@dataclass(frozen=True)
class SessionInfo:
    """What the history keeps about the session a run belongs to (its row in `sessions`), as
    the envelope that started the run describes it."""

    session: str
    platform: str
    chat_kind: str = "private"
    title: str = ""


@dataclass(frozen=True)
class RunRecord:
    """What the session runner knows about a run when it ends. `last_message` is the id of the
    session's last message when the run was queued for the record: the run added the
    messages up to it, which tells a catch-up of several runs which message was whose."""

    where: SessionInfo  # the name is kept in saved session states (`unrecorded`)
    envelope_ids: Sequence[str]
    trigger: str
    sender: str
    model: str
    finish_reason: str
    iterations: int
    usage: Usage
    started_at: float
    finished_at: float
    first_text_at: float | None = None
    error: str | None = None
    last_message: str | None = None
    trace: Trace | None = None  # what happened in it, step by step (`bot.trace`)
    parent_run: str | None = None  # a helper's: the run whose `delegate` call started it
    config: RanWith | None = None  # what it ran with (`bot.vocabulary.ran_with`)

    @property
    def id(self) -> str:
        return run_id(self.where.session, self.envelope_ids[0])


@functools.lru_cache(maxsize=1024)
def run_id(session: str, envelope_id: str) -> str:
    """The id of the run a session's envelope started; asked for several times a turn (its
    log lines, its record's rows), so the latest are kept."""
    return uuid.uuid5(RUN_IDS, f"{session}\n{envelope_id}").hex
