"""Files a tool made: stored by content with the type their bytes say, announced once each,
and held to the size and the turn's count, with a note the model reads for every file."""

from __future__ import annotations

import hashlib
from pathlib import Path

from bot.agent.attachments import Attachments, SendLimits, clean_name
from bot.files.store import FileStore
from bot.tools.base import Attachment
from bot.vocabulary.files import size
from bot.vocabulary.state import TurnProgress
from tests.support.images import image_bytes

TABLE = b"a,b\n1,2\n"


async def test_files_are_stored_by_content_and_announced(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    attachments = Attachments(store, SendLimits(max_bytes=1_000_000, per_turn=5))
    png = image_bytes((40, 30))
    turn = TurnProgress()
    files = [Attachment("out/chart.bin", png, " A chart "), Attachment("t.csv", TABLE)]
    note, sent = await attachments.take("call-1", files, turn)
    assert [(e.call_id, e.file.name, e.file.media_type, e.caption) for e in sent] == [
        ("call-1", "chart.bin", "image/png", "A chart"),  # an image by its bytes
        ("call-1", "t.csv", "text/csv", ""),  # anything else by its name
    ]
    assert sent[0].file.sha256 == hashlib.sha256(png).hexdigest()
    assert store.read(sent[1].file) == TABLE
    assert note.splitlines() == [
        f"chart.bin ({size(len(png))}) was sent to the person; do not send it again.",
        "t.csv (8 bytes) was sent to the person; do not send it again.",
    ]
    assert turn.files_sent == 2


async def test_what_is_not_sent_is_said_and_not_stored(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "files")
    attachments = Attachments(store, SendLimits(max_bytes=10, per_turn=2))
    turn = TurnProgress(files_sent=1)
    files = [
        Attachment("empty.txt", b""),
        Attachment("big.txt", b"x" * 11),
        Attachment("one.txt", b"1"),
        Attachment("two.txt", b"2"),
    ]
    note, sent = await attachments.take("call-1", files, turn)
    assert [e.file.name for e in sent] == ["one.txt"]
    assert note.splitlines() == [
        "empty.txt was not sent: it is empty.",
        "big.txt was not sent: it is 11 bytes, more than the 10 bytes allowed.",
        "one.txt (1 byte) was sent to the person; do not send it again.",
        "two.txt was not sent: a turn sends at most 2 files and this one sent them.",
    ]
    assert turn.files_sent == 2
    assert sorted(p.name for p in (tmp_path / "files").rglob("*") if p.is_file()) == [
        hashlib.sha256(b"1").hexdigest()
    ]


async def test_a_process_without_a_store_sends_nothing() -> None:
    attachments = Attachments(None, SendLimits(max_bytes=10, per_turn=2))
    note, sent = await attachments.take("c", [Attachment("a.txt", b"a")], TurnProgress())
    assert sent == [] and note == "a.txt was not sent: this conversation cannot receive files."
    none = Attachments(FileStore(Path("/nonexistent")), SendLimits(max_bytes=10, per_turn=0))
    note, sent = await none.take("c", [Attachment("a.txt", b"a")], TurnProgress())
    assert sent == [] and note == (
        "a.txt was not sent: this deployment sends no files (PARLEY_SEND_FILES_PER_TURN is 0)."
    )


def test_a_name_is_one_clean_component() -> None:
    assert clean_name("../../etc/passwd") == "passwd"
    assert clean_name("a\\b\nc.txt") == "bc.txt"
    assert clean_name(".hidden") == "hidden"
    assert clean_name("///") == "file"
    assert len(clean_name("x" * 400)) == 255
