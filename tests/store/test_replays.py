"""What a recorded run was given, read back on both databases: its message and files, the
conversation before it from the session's last /new (summaries left out, turns whole), and
its tool calls with their answers; a run that began with no message gives nothing."""

from __future__ import annotations

import time

from bot.store.database import Database
from bot.store.history import RunRecord, SessionInfo
from bot.store.replays import RecordedCall, ReplaySources
from bot.vocabulary.files import FileRef
from bot.vocabulary.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage

SESSION = "tg:1"
PHOTO = FileRef(sha256="a" * 64, media_type="image/png", size=10, name="cat.png")


def user(*blocks: TextBlock | ImageBlock | ToolResultBlock) -> Message:
    return Message(role="user", content=list(blocks))


def assistant(*blocks: TextBlock | ToolUseBlock) -> Message:
    return Message(role="assistant", content=list(blocks))


async def recorded(db: Database, state: SessionState, envelope: str) -> str:
    record = RunRecord(
        SessionInfo(SESSION, "tg"), [envelope], "message", SESSION, "claude-test", "end_turn",
        1, Usage(), time.time(), time.time(),
    )  # fmt: skip
    await db.history.record(state, record)
    return record.id


async def test_a_runs_input_is_read_back_as_it_was_given(db: Database) -> None:
    state = SessionState()
    state.messages += [
        user(TextBlock(text="[Mon]"), TextBlock(text="hi")),
        assistant(TextBlock(text="hello")),
    ]
    await recorded(db, state, "e1")
    state.messages.append(Message(role="user", summary=True, content=[TextBlock(text="so far")]))
    call = ToolUseBlock(id="t1", name="remember", input={"fact": "cats"})
    state.messages += [
        user(TextBlock(text="[Tue]"), ImageBlock(file=PHOTO), TextBlock(text="keep my cat")),
        assistant(call),
        user(ToolResultBlock(tool_use_id="t1", content="Saved #1")),
        assistant(TextBlock(text="Kept.")),
    ]
    second = await recorded(db, state, "e2")

    given = await ReplaySources(db.engine).input_of(second)
    assert given is not None
    assert (given.text, given.attachments, given.sender) == ("keep my cat", [PHOTO], SESSION)
    assert [m.text for m in given.before] == ["[Mon]\nhi", "hello"]  # no summary
    assert all(m.id not in {o.id for o in state.messages} for m in given.before)
    assert given.calls == [RecordedCall("remember", {"fact": "cats"}, "Saved #1", False)]
    assert await ReplaySources(db.engine).input_of("f" * 32) is None
