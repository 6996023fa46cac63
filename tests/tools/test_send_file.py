"""`send_file`: a workspace file's bytes handed back for the person, opened as every workspace
tool opens a path, and refused with a sentence the model can act on when it is not there,
empty, too large, a link, a directory or outside the workspace."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from bot.tools.base import Attachment, FileRoom, ToolContext, ToolError, ToolResult
from bot.tools.send_file import send_file_tool
from tests.tools.workspace_support import context, home

TOOL = send_file_tool(max_bytes=1000)


def send(ctx: ToolContext, path: str, caption: str = "") -> ToolResult:
    values = dict(TOOL.arguments.model_validate({"path": path, "caption": caption}))
    result = TOOL.run_sync(ctx, values)
    assert isinstance(result, ToolResult)
    return result


def test_a_file_is_handed_back_with_its_caption(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    (home(ctx) / "out").mkdir(parents=True)
    (home(ctx) / "out" / "t.csv").write_bytes(b"a,b\n")
    result = send(ctx, "out/../out/t.csv", "The table")
    sent = Attachment("t.csv", b"a,b\n", "The table")
    assert result == ToolResult("Sending out/t.csv from the workspace.", (sent,))


@pytest.mark.parametrize(
    ("path", "told"),
    [
        ("gone.txt", "Not found: gone.txt does not exist in the workspace."),
        ("empty.txt", "Refused: empty.txt is empty; there is nothing to send."),
        ("big.bin", "Refused: big.bin is 1001 bytes; a file sent may be at most 1000 bytes."),
        ("link.txt", "Refused: link.txt is a symbolic link (links are not followed)."),
        ("folder", "Refused: folder is a directory; list_files shows what is in it."),
        ("../x.txt", "Refused: '../x.txt' leads outside the workspace."),
        ("/etc/passwd", "Refused: '/etc/passwd' is absolute; paths are relative to the workspace."),
        (".", "Refused: the path names the workspace itself; give a file name."),
    ],
)
def test_what_cannot_be_sent_is_refused_with_a_sentence(
    tmp_path: Path, path: str, told: str
) -> None:
    ctx = context(tmp_path)
    folder = home(ctx)
    folder.mkdir(parents=True)
    (folder / "empty.txt").write_bytes(b"")
    (folder / "big.bin").write_bytes(b"x" * 1001)
    (folder / "folder").mkdir()
    (tmp_path / "secret.txt").write_text("not yours")
    os.symlink(tmp_path / "secret.txt", folder / "link.txt")
    with pytest.raises(ToolError) as refused:
        send(ctx, path)
    assert str(refused.value) == told


def test_an_empty_workspace_has_nothing_to_send(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="does not exist in the workspace"):
        send(context(tmp_path), "a.txt")
    with pytest.raises(ToolError, match="has no workspace"):
        send(ToolContext("tg:1", context(tmp_path).user), "a.txt")


def test_a_turn_that_sent_its_files_reads_no_more(tmp_path: Path) -> None:
    """The turn's room for files is taken before a byte is read: past it, the file is
    refused unread, and a call that read nothing gives its share back."""
    room = FileRoom(files=1, out_bytes=0)
    ctx = replace(context(tmp_path), files=room)
    home(ctx).mkdir(parents=True)
    (home(ctx) / "a.txt").write_bytes(b"a")
    (home(ctx) / "b.txt").write_bytes(b"b")
    assert send(ctx, "a.txt").files == (Attachment("a.txt", b"a"),)
    assert room.files == 0
    with pytest.raises(ToolError) as refused:
        send(ctx, "b.txt")
    assert str(refused.value) == (
        "Refused: b.txt was not sent; this turn may send no more files (it sent those it may)."
    )


def test_no_more_than_the_size_it_had_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that grows while it is read (something else writes it) is refused, and what
    was read is never more than the size it had when it was opened, within the limit."""
    ctx = context(tmp_path)
    home(ctx).mkdir(parents=True)
    grown = home(ctx) / "log.txt"
    grown.write_bytes(b"x" * 600)
    read = os.read
    returned: list[int] = []

    def reading(fd: int, length: int) -> bytes:
        if not returned:
            with grown.open("ab") as more:
                more.write(b"y" * 300)  # 900 bytes now, still within the 1000 allowed
        data = read(fd, length)
        returned.append(len(data))
        return data

    monkeypatch.setattr(os, "read", reading)
    with pytest.raises(ToolError, match=r"^Refused: log.txt changed while it was read; try again"):
        send(ctx, "log.txt")
    assert sum(returned) == 600
