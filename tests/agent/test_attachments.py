"""Files a tool made: stored by content with the type their bytes say, announced once each,
and held to the size and the turn's count, with a note the model reads for every file that
says what the reply recorded of it: sent, refused (and why), or only handed on."""

from __future__ import annotations

import hashlib
from pathlib import Path

from bot.agent.attachments import Attachments, Deliveries, SendLimits, clean_name
from bot.files.reading import Readers, ReadLimits
from bot.files.store import FileStore
from bot.tools.base import Attachment
from bot.vocabulary.files import size
from bot.vocabulary.state import TurnProgress
from tests.fakes import hostile_files
from tests.support.images import image_bytes

TABLE = b"a,b\n1,2\n"


async def test_files_are_stored_by_content_and_announced(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    attachments = Attachments(
        Readers(store.root, ReadLimits()), SendLimits(max_bytes=1_000_000, per_turn=5)
    )
    png = image_bytes((40, 30))
    turn = TurnProgress()
    files = [Attachment("out/chart.bin", png, " A chart "), Attachment("t.csv", TABLE)]
    taken = await attachments.take("call-1", files, turn)
    sent = taken.sent
    assert [(e.call_id, e.file.name, e.file.media_type, e.caption) for e in sent] == [
        ("call-1", "chart.bin", "image/png", "A chart"),  # an image by its bytes
        ("call-1", "t.csv", "text/csv", ""),  # anything else by its name
    ]
    assert sent[0].file.sha256 == hashlib.sha256(png).hexdigest()
    assert store.read(sent[1].file) == TABLE
    assert taken.note().splitlines() == [
        f"chart.bin ({size(len(png))}) was handed to the chat to be posted for the person; "
        "do not send it again.",
        "t.csv (8 bytes) was handed to the chat to be posted for the person; do not send it again.",
    ]
    assert turn.files_sent == 2


async def test_the_note_says_what_the_reply_recorded_of_each_file(tmp_path: Path) -> None:
    """Posted, refused by the platform, or not recorded: the note never says a file the
    platform refused was sent."""
    attachments = Attachments(
        Readers(tmp_path, ReadLimits()), SendLimits(max_bytes=1_000, per_turn=5)
    )
    files = [Attachment("a.csv", b"a"), Attachment("b.png", b"b"), Attachment("c.txt", b"c")]
    taken = await attachments.take("call-1", files, TurnProgress())
    deliveries = Deliveries()
    posted, refused, _ = taken.sent
    deliveries.record(posted, "")
    deliveries.record(refused, "Telegram refused it (Bad Request: file is too big)")
    assert taken.note(deliveries).splitlines() == [
        "a.csv (1 byte) was sent to the person; do not send it again.",
        "b.png (1 byte) was not sent: Telegram refused it (Bad Request: file is too big).",
        "c.txt (1 byte) was handed to the chat to be posted for the person; do not send it again.",
    ]


async def test_what_is_not_sent_is_said_and_not_stored(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "files")
    attachments = Attachments(
        Readers(store.root, ReadLimits()), SendLimits(max_bytes=10, per_turn=2)
    )
    turn = TurnProgress(files_sent=1)
    files = [
        Attachment("empty.txt", b""),
        Attachment("big.txt", b"x" * 11),
        Attachment("one.txt", b"1"),
        Attachment("two.txt", b"2"),
    ]
    taken = await attachments.take("call-1", files, turn)
    assert [e.file.name for e in taken.sent] == ["one.txt"]
    deliveries = Deliveries()
    deliveries.record(taken.sent[0], "")
    assert taken.note(deliveries).splitlines() == [
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
    taken = await attachments.take("c", [Attachment("a.txt", b"a")], TurnProgress())
    assert taken.sent == []
    assert taken.note() == "a.txt was not sent: this conversation cannot receive files."
    none = Attachments(
        Readers(Path("/nonexistent"), ReadLimits()), SendLimits(max_bytes=10, per_turn=0)
    )
    taken = await none.take("c", [Attachment("a.txt", b"a")], TurnProgress())
    assert taken.sent == [] and taken.note() == (
        "a.txt was not sent: this deployment sends no files (PARLEY_SEND_FILES_PER_TURN is 0)."
    )


def test_a_name_is_one_clean_component() -> None:
    assert clean_name("../../etc/passwd") == "passwd"
    assert clean_name("a\\b\nc.txt") == "bc.txt"
    assert clean_name(".hidden") == "hidden"
    assert clean_name("///") == "file"
    assert len(clean_name("x" * 400)) == 255


async def test_a_hostile_image_a_tool_made_is_not_sent_and_the_model_is_told(
    tmp_path: Path,
) -> None:
    """The crafted PNG a program writes in ./out/ goes through the readers like a person's
    file: the turn goes on, nothing is stored, and the note says why it was not sent."""
    attachments = Attachments(Readers(tmp_path, ReadLimits()), SendLimits(10_000_000, 5))
    name, bomb = hostile_files.png_ztxt_bomb()
    turn = TurnProgress()
    taken = await attachments.take("c", [Attachment(name, bomb), Attachment("t.csv", TABLE)], turn)
    assert [event.file.name for event in taken.sent] == ["t.csv"]
    assert (
        taken.note().splitlines()[0]
        == f"{name} was not sent: the image carries more packed text than is read."
    )
    assert turn.files_sent == 1
