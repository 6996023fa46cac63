"""What a recorded run was given, read back from the record so it can be run again
(`bot.lab`): the person's message and files, the conversation before it, and the tool calls
it made with what they answered.

The conversation is the session's recorded messages before the run's first, from its last
`/new` when that came before the run, without the summaries compaction wrote (the turns they
stand for are in the record, and a replay folds a long context as any turn does). The
question is the run's first message but a summary it wrote: its last text (what the person
wrote, after the time stamp and any memories that went with it) and its files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from bot.store.history import MESSAGES, RUNS, SESSIONS
from bot.vocabulary.files import FileRef
from bot.vocabulary.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    new_id,
)

MAX_BEFORE = 400  # messages of the conversation before a run, at most (the newest)


@dataclass(frozen=True)
class RecordedCall:
    """A tool call the run made, and what it answered."""

    name: str
    arguments: dict[str, Any]
    content: str
    is_error: bool


@dataclass(frozen=True)
class RunInput:
    run: str
    session: str
    sender: str
    chat_kind: str
    platform: str
    text: str
    attachments: list[FileRef]
    before: list[Message]  # with ids of their own: they are another session's messages
    calls: list[RecordedCall]


class ReplaySources:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def input_of(self, run_id: str) -> RunInput | None:
        """What run `run_id` was given; None when it is gone or began with no message (a
        decision, a resume)."""
        found = (
            select(
                RUNS.c.session_key,
                RUNS.c.sender,
                SESSIONS.c.chat_kind,
                SESSIONS.c.platform,
                SESSIONS.c.context_from,
            )
            .select_from(RUNS.join(SESSIONS, SESSIONS.c.key == RUNS.c.session_key))
            .where(RUNS.c.id == run_id)
        )
        async with self.engine.connect() as db:
            run = (await db.execute(found)).first()
            if run is None:
                return None
            own = select(MESSAGES).where(MESSAGES.c.run_id == run_id).order_by(MESSAGES.c.seq)
            rows = [row for row in (await db.execute(own)).all() if not row.summary]
            if not rows or rows[0].role != "user":  # a summary it wrote may come first
                return None
            start = run.context_from if run.context_from < rows[0].seq else 0
            earlier = (
                select(MESSAGES)
                .where(
                    MESSAGES.c.session_key == run.session_key,
                    MESSAGES.c.seq > start,
                    MESSAGES.c.seq < rows[0].seq,
                    MESSAGES.c.summary.is_(False),
                )
                .order_by(MESSAGES.c.seq.desc())
                .limit(MAX_BEFORE)
            )
            before = list(reversed((await db.execute(earlier)).all()))
        question = _message(rows[0])
        texts = [block.text for block in question.content if isinstance(block, TextBlock)]
        files = [b.file for b in question.content if isinstance(b, ImageBlock | DocumentBlock)]
        return RunInput(
            run_id, run.session_key, run.sender, run.chat_kind, run.platform,
            texts[-1] if texts else "", files, _turns([_message(row) for row in before]),
            _calls([_message(row) for row in rows]),
        )  # fmt: skip


def _message(row: Any) -> Message:
    return Message.model_validate(
        {"role": row.role, "content": row.content, "at": row.created_at.timestamp()}
    )


def _turns(messages: list[Message]) -> list[Message]:
    """`messages` from the first turn's start, each with an id of its own."""
    first = next((i for i, message in enumerate(messages) if message.starts_turn), len(messages))
    return [message.model_copy(update={"id": new_id()}) for message in messages[first:]]


def _calls(messages: Sequence[Message]) -> list[RecordedCall]:
    """The run's tool calls in the order made, each with its result."""
    results = {
        block.tool_use_id: block
        for message in messages
        for block in message.content
        if isinstance(block, ToolResultBlock)
    }
    return [
        RecordedCall(
            block.name, dict(block.input), results[block.id].content, results[block.id].is_error
        )
        for message in messages
        for block in message.content
        if isinstance(block, ToolUseBlock) and block.id in results
    ]
