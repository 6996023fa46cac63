"""What the workspace's files hold: writes that are atomic and held to the quota, appends,
reads in windows of whole characters, listings, and the tools as the executor and the
policy see them."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from bot.assembly.catalog import standard_tools
from bot.config.settings import Settings
from bot.tools import workspace
from bot.tools.base import ToolContext, ToolError, ToolRegistry
from bot.tools.executor import ToolExecutor
from bot.tools.policy import Policy
from bot.tools.untrusted import TAG
from bot.tools.workspace import MAX_ENTRIES
from bot.tools.workspace_io import TEMP_PREFIX, usage
from bot.vocabulary.messages import ToolUseBlock
from tests.tools.workspace_support import (
    built,
    call,
    context,
    home,
    list_files,
    read_file,
    write_file,
)

MIB = 1_048_576


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return context(tmp_path / "workspaces")


def files_in(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_the_default_quota_holds_to_the_byte(ctx: ToolContext) -> None:
    assert Settings().workspace_quota_mb == 50  # `write_file`'s quota, as the worker builds it
    call(write_file, ctx, path="notes.txt", content="")
    with (home(ctx) / "big.bin").open("wb") as big:  # sparse: no 50 MB written
        big.truncate(50 * MIB - 5)
    answer = call(write_file, ctx, path="notes.txt", content="12345")
    assert answer == "Wrote notes.txt: 5 bytes (workspace: 50.00 MB of 50.00 MB)."
    with pytest.raises(ToolError) as error:
        call(write_file, ctx, path="more.txt", content="6")
    assert str(error.value) == (
        "Refused: workspace quota exceeded: more.txt would bring it to "
        f"{50 * MIB + 1:,} bytes of {50 * MIB:,} allowed ({50 * MIB:,} used now)."
    )
    assert not (home(ctx) / "more.txt").exists()
    with pytest.raises(ToolError, match="quota exceeded"):
        call(write_file, ctx, path="notes.txt", content="6", append=True)
    assert call(read_file, ctx, path="notes.txt") == "12345"
    call(write_file, ctx, path="notes.txt", content="54321")  # a replacement counts the change
    assert call(read_file, ctx, path="notes.txt") == "54321"
    assert files_in(home(ctx)) == ["big.bin", "notes.txt"]


def test_the_quota_counts_the_whole_workspace_in_bytes(tmp_path: Path) -> None:
    ctx, small = context(tmp_path), built(workspace_quota_mb=1 / 1024)  # 1,024 bytes
    write = small["write_file"]
    call(write, ctx, path="a/one.txt", content="é" * 500)  # 1,000 bytes of UTF-8
    call(write, ctx, path="b/c/two.txt", content="x" * 24)
    with pytest.raises(ToolError, match=r"1,025 bytes of 1,024 allowed \(1,024 used now\)"):
        call(write, ctx, path="three.txt", content="y")
    call(write, ctx, path="b/c/two.txt", content="z" * 24)
    assert "1,024 bytes of 1,024 bytes" in call(small["list_files"], ctx)


def test_append_adds_to_the_end(ctx: ToolContext) -> None:
    assert call(write_file, ctx, path="log.txt", content="one\n", append=True).startswith(
        "Wrote log.txt"
    )
    assert call(write_file, ctx, path="log.txt", content="two\n", append=True).startswith(
        "Appended to log.txt: 8 bytes"
    )
    assert (home(ctx) / "log.txt").read_text() == "one\ntwo\n"
    call(write_file, ctx, path="log.txt", content="fresh")
    assert call(read_file, ctx, path="log.txt") == "fresh"


def test_a_replace_is_atomic_and_leaves_no_temporary_file(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    call(write_file, ctx, path="doc/draft.md", content="first")
    inode = (home(ctx) / "doc" / "draft.md").stat().st_ino
    call(write_file, ctx, path="doc/draft.md", content="second")
    assert (home(ctx) / "doc" / "draft.md").stat().st_ino != inode  # a new file, renamed in
    assert files_in(home(ctx)) == ["doc", "doc/draft.md"]

    def failing_rename(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_rename)
    with pytest.raises(OSError, match="No space left"):
        call(write_file, ctx, path="doc/draft.md", content="third")
    monkeypatch.undo()
    assert (home(ctx) / "doc" / "draft.md").read_text() == "second"
    assert files_in(home(ctx)) == ["doc", "doc/draft.md"]
    assert not any(TEMP_PREFIX in name for name in files_in(home(ctx)))


def test_long_files_are_read_in_windows_of_whole_characters(ctx: ToolContext) -> None:
    text = "".join(f"line {n}: größe ✓ 🙂\n" for n in range(40))
    call(write_file, ctx, path="long.txt", content=text)
    size = len(text.encode())
    pieces, offset = [], 0
    while True:
        answer = call(read_file, ctx, path="long.txt", offset=offset, limit=100)
        body, _, note = answer.rpartition("\n[")
        pieces.append(body)
        assert note.startswith(f"bytes {offset:,} to ") and f"of {size:,} shown" in note
        if "more: read_file with offset=" not in note:
            break
        offset = int(note.rsplit("offset=", 1)[1].rstrip("]"))
    assert "".join(pieces) == text
    assert len(pieces) >= size // 100
    inside = call(read_file, ctx, path="long.txt", offset=text.encode().index("🙂".encode()) + 1)
    assert inside.startswith("\n") and "\ufffd" not in inside  # moved past the split character


def test_reads_are_bounded_by_the_output_limit(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    call(write_file, ctx, path="big.txt", content="a" * 10_000)
    answer = call(built(tool_output_limit=2000)["read_file"], ctx, path="big.txt", limit=1_000_000)
    assert answer.endswith("[bytes 0 to 1,600 of 10,000 shown; more: read_file with offset=1600]")
    assert len(answer) < 2000


def test_bad_bytes_are_replaced_and_binary_is_refused(ctx: ToolContext) -> None:
    call(write_file, ctx, path="keep.txt", content="")
    (home(ctx) / "latin1.txt").write_bytes("café au lait, crème brûlée".encode("latin-1"))
    answer = call(read_file, ctx, path="latin1.txt")
    assert answer.startswith("caf\ufffd au lait, cr\ufffdme br\ufffdl\ufffde")
    assert answer.endswith("[4 bytes that are not UTF-8 are shown as \ufffd]")
    (home(ctx) / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    with pytest.raises(ToolError, match=r"^Refused: image.png is binary \(272 bytes\), not UTF-8"):
        call(read_file, ctx, path="image.png")
    assert call(read_file, ctx, path="keep.txt") == "(keep.txt is empty)"
    with pytest.raises(ToolError, match=r"offset 5 is past the end of keep\.txt"):
        call(read_file, ctx, path="keep.txt", offset=5)


def test_content_and_arguments_are_bounded(ctx: ToolContext) -> None:
    with pytest.raises(ValueError, match="at most 1000000 characters"):
        call(write_file, ctx, path="huge.txt", content="x" * 1_000_001)
    with pytest.raises(ValueError, match="greater than or equal to 64"):
        call(read_file, ctx, path="x.txt", limit=1)


def test_a_listing_is_sorted_bounded_and_shows_kinds(ctx: ToolContext) -> None:
    call(write_file, ctx, path="b.txt", content="bb")
    call(write_file, ctx, path="a/inner.txt", content="i")
    (home(ctx) / "c.lnk").symlink_to("/etc/passwd")
    (home(ctx) / "bad\nname").write_text("")
    assert call(list_files, ctx).splitlines() == [
        ".: 4 entries; workspace 14 bytes of 50.00 MB",  # 2 + 1 + the link's 11
        "dir   a/",
        "file  b.txt  2 bytes",
        "file  'bad\\nname'  0 bytes",
        "link  c.lnk -> /etc/passwd (not followed)",
    ]
    assert call(list_files, ctx, path="a").splitlines()[1:] == ["file  inner.txt  1 byte"]
    call(write_file, ctx, path="empty/x", content="")
    os.unlink(home(ctx) / "empty" / "x")
    assert call(list_files, ctx, path="empty").startswith("empty is empty (workspace ")
    for n in range(MAX_ENTRIES + 5):
        (home(ctx) / "many" / f"{n:04}").parent.mkdir(exist_ok=True)
        (home(ctx) / "many" / f"{n:04}").write_text("")
    lines = call(list_files, ctx, path="many").splitlines()
    assert lines[0].startswith(f"many: {MAX_ENTRIES + 5} entries")
    assert lines[1] == "file  0000  0 bytes"
    assert lines[-2] == f"file  {MAX_ENTRIES - 1:04}  0 bytes"
    assert lines[-1] == "... and 5 more entries"


def test_the_tools_are_offered_and_write_file_asks_first() -> None:
    tools = {t.name: t for t in standard_tools(Settings())}
    for name in ("read_file", "write_file", "list_files"):
        assert tools[name].isolation == "thread"
    assert tools["read_file"].read_only and tools["read_file"].untrusted
    assert tools["list_files"].read_only
    assert tools["write_file"].sensitive and not tools["write_file"].read_only
    policy = Policy()
    assert policy.decide(write_file, "write_file", {"path": "a", "content": "b"}) == "ask"
    assert policy.decide(read_file, "read_file", {"path": "a"}) == "allow"
    assert policy.decide(list_files, "list_files", {}) == "allow"


async def test_the_executor_runs_them_off_the_loop(ctx: ToolContext) -> None:
    executor = ToolExecutor(
        ToolRegistry(built().values()), timeout=30, concurrency=4, output_limit=16_000
    )
    calls = [
        ToolUseBlock(id="w", name="write_file", input={"path": "n.md", "content": "hi"}),
        ToolUseBlock(id="l", name="list_files", input={}),
    ]
    try:
        [written] = await executor.run_all(calls[:1], ctx, {})
        assert not written.is_error, written.content
        assert written.content.startswith("Wrote n.md: 2 bytes")
        read, listed, escape = await executor.run_all(
            [
                ToolUseBlock(id="r", name="read_file", input={"path": "n.md"}),
                calls[1],
                ToolUseBlock(id="e", name="read_file", input={"path": "../../etc/passwd"}),
            ],
            ctx,
            {},
        )
    finally:
        await executor.aclose()
    assert read.content == f'<{TAG} source="read_file">\nhi\n</{TAG}>'
    assert "file  n.md  2 bytes" in listed.content
    assert escape.is_error
    assert "Refused: '../../etc/passwd' leads outside the workspace." in escape.content


async def test_writes_at_once_cannot_share_the_last_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each write holds the session's lock from the quota check to the rename, so of eight
    writes that each fit alone, only one fits. To give a race every chance, the first write
    to count the workspace waits there for a second one to count it too: with the lock, none
    can arrive, and it goes on after a short wait."""
    ctx = context(tmp_path)
    counting = threading.Semaphore(0)
    first = threading.Lock()

    def rendezvous(root_fd: int) -> int:
        total = usage(root_fd)
        if first.acquire(blocking=False):
            counting.acquire(timeout=3)  # only a write racing past the lock releases it
        else:
            counting.release()
        return total

    monkeypatch.setattr(workspace, "usage", rendezvous)
    small = built(workspace_quota_mb=1 / 1024).values()  # 1,024 bytes
    executor = ToolExecutor(ToolRegistry(small), timeout=60, concurrency=8, output_limit=16_000)
    content = "x" * 600
    calls = [
        ToolUseBlock(id=f"w{n}", name="write_file", input={"path": f"{n}.txt", "content": content})
        for n in range(8)
    ]
    try:
        outcomes = await executor.run_all(calls, ctx, {})
    finally:
        await executor.aclose()
    assert sum(not o.is_error for o in outcomes) == 1, [o.content for o in outcomes]
    assert all("quota exceeded" in o.content for o in outcomes if o.is_error)
    assert sum(p.stat().st_size for p in home(ctx).iterdir()) == 600
