"""Which files the record still wants: a file two sessions were sent stays while either
keeps it; deleting a session, or retention deleting old messages, names the files no
message carries any more, and the file store removes those."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import select, update

from bot.config.settings import Settings
from bot.files.store import FileStore
from bot.store import migrate
from bot.store.database import Database, open_database
from bot.store.history import MESSAGES, SESSIONS, RunRecord, SessionInfo
from bot.store.record_statements import FILES
from bot.vocabulary.files import FileRef
from bot.vocabulary.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from bot.vocabulary.state import SessionState
from bot.vocabulary.usage import Usage
from tests.support.documents import pdf_bytes
from tests.support.images import image_bytes

LONG_AGO = datetime.now(UTC) - timedelta(days=40)


async def sent(db: Database, key: str, *files: FileRef, state: SessionState | None = None) -> None:
    """A turn of `key` in which the person sent `files`, recorded as a worker records it."""
    state = state or SessionState()
    blocks = [ImageBlock(file=f) if f.is_image else DocumentBlock(file=f) for f in files]
    state.messages.append(Message(role="user", content=[*blocks, TextBlock(text="look")]))
    usage = Usage(input_tokens=10, output_tokens=1)
    state.messages.append(Message(role="assistant", content=[TextBlock(text="ok")], usage=usage))
    now = time.time()
    record = RunRecord(
        SessionInfo(key, "tg"), [f"{key}-{len(state.messages)}"], "message", "u",
        "claude-test", "end_turn", 1, usage, now, now,
    )  # fmt: skip
    await db.history.record(state, record)


async def test_a_file_goes_once_no_session_keeps_it(db: Database, tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    shared = store.put(image_bytes((40, 30), "PNG"), "image/png", "shared.png")
    own = store.put(image_bytes((50, 30), "PNG"), "image/png", "own.png")
    pdf = pdf_bytes(["Invoice 7"])
    invoice = store.put(pdf, "application/pdf", "invoice.pdf").model_copy(
        update={"extract": store.put(b"[Page 1]\nInvoice 7", "text/plain").sha256}
    )
    await sent(db, "tg:1", shared, own, invoice)
    await sent(db, "tg:2", shared)
    first = await db.archive.delete("tg:1")
    assert first.existed
    assert sorted(first.unused_files) == sorted([own.sha256, *invoice.stored])
    assert store.remove(first.unused_files) == 3
    assert store.read(shared) and not store.path(own.sha256).exists()
    second = await db.archive.delete("tg:2", files=[own.sha256])  # one only Redis knew of
    assert sorted(second.unused_files) == sorted([shared.sha256, own.sha256])
    assert store.remove(second.unused_files) == 1  # the other was gone already


async def test_retention_names_the_files_of_the_messages_it_deletes(
    db: Database, tmp_path: Path
) -> None:
    store = FileStore(tmp_path)
    old, kept = (store.put(image_bytes((40 + n, 30), "PNG"), "image/png") for n in range(2))
    state = SessionState()
    await sent(db, "tg:active", old, state=state)
    await sent(db, "tg:active", kept, state=state)
    await sent(db, "tg:idle", kept)
    active = MESSAGES.c.session_key == "tg:active"
    first_turn = select(MESSAGES.c.seq).where(active).order_by(MESSAGES.c.seq).limit(2)
    async with db.engine.begin() as connection:
        await connection.execute(
            update(MESSAGES).where(MESSAGES.c.seq.in_(first_turn)).values(created_at=LONG_AGO)
        )
        await connection.execute(
            update(SESSIONS).where(SESSIONS.c.key == "tg:idle").values(updated_at=LONG_AGO)
        )
    pruned = await db.archive.prune(datetime.now(UTC) - timedelta(days=30))
    assert pruned.sessions == ["tg:idle"]
    assert pruned.unused_files == [old.sha256]  # `kept` is still in the active session


async def test_the_migration_finds_the_files_of_messages_recorded_before_it(
    database_url: str, tmp_path: Path
) -> None:
    store = FileStore(tmp_path)
    photo = store.put(image_bytes((40, 30), "PNG"), "image/png")
    text = store.put(b"[Page 1]\nInvoice", "text/plain")
    invoice = store.put(pdf_bytes(["Invoice"]), "application/pdf")
    invoice = invoice.model_copy(update={"extract": text.sha256})
    db = await open_database(Settings(_env_file=None, database_url=database_url))
    try:
        await sent(db, "tg:1", photo, invoice)
        written = await referenced(db)
    finally:
        await db.aclose()
    assert sorted(sha for _, sha in written) == sorted([photo.sha256, *invoice.stored])
    await migrate.downgrade(database_url, "0010")
    await migrate.upgrade(database_url)
    db = await open_database(Settings(_env_file=None, database_url=database_url))
    try:
        assert await referenced(db) == written
    finally:
        await db.aclose()


async def referenced(db: Database) -> list[tuple[str, str]]:
    async with db.engine.connect() as connection:
        rows = await connection.execute(select(FILES.c.message_id, FILES.c.sha256))
        return sorted((row.message_id, row.sha256) for row in rows)


async def test_a_file_a_tool_sent_is_kept_and_goes_like_one_sent_to_it(
    db: Database, tmp_path: Path
) -> None:
    store = FileStore(tmp_path)
    chart = store.put(image_bytes((60, 40), "PNG"), "image/png", "chart.png")
    call = ToolUseBlock(id="t1", name="run_python", input={"code": "plot()"})
    state = SessionState()
    await sent(db, "tg:1", state=state)
    state.messages += [
        Message(role="assistant", content=[call]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="sent chart.png",
                                                      files=[chart])]),
    ]  # fmt: skip
    await sent(db, "tg:1", state=state)
    deleted = await db.archive.delete("tg:1")
    assert deleted.unused_files == [chart.sha256]
