"""A session's workspace holds its files and nothing can lead out of it: no path, no link
(placed before the call or swapped in), no special file, no other session's directory."""

from __future__ import annotations

import os
import queue
import stat
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.tools.base import ToolContext, ToolError
from bot.tools.workspace_paths import MAX_DIRNAME, session_dirname
from bot.vocabulary.envelope import Sender
from tests.tools.workspace_support import (
    OTHER,
    SESSION,
    call,
    context,
    home,
    list_files,
    read_file,
    write_file,
)

SECRET = "the secret outside"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return context(tmp_path / "workspaces")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspaces, with a file no session may read or change."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET)
    return folder


def refused(tool_call: object, match: str) -> str:
    """The one-line message a refused call gives."""
    assert callable(tool_call)
    with pytest.raises(ToolError, match=match) as error:
        tool_call()
    message = str(error.value)
    assert "\n" not in message
    return message


def test_a_write_makes_a_private_directory_for_the_session(ctx: ToolContext) -> None:
    answer = call(write_file, ctx, path="notes/todo.md", content="buy milk\n")
    assert answer.startswith("Wrote notes/todo.md: 9 bytes")
    assert (home(ctx) / "notes" / "todo.md").read_text() == "buy milk\n"
    assert stat.S_IMODE(home(ctx).stat().st_mode) == 0o700
    assert stat.S_IMODE((home(ctx) / "notes").stat().st_mode) == 0o700
    assert call(read_file, ctx, path="./notes//todo.md") == "buy milk\n"


def test_sessions_never_share_files(tmp_path: Path) -> None:
    mine, theirs = context(tmp_path, SESSION), context(tmp_path, OTHER)
    call(write_file, mine, path="draft.txt", content="mine")
    refused(lambda: call(read_file, theirs, path="draft.txt"), "^Not found: draft.txt")
    call(write_file, theirs, path="draft.txt", content="theirs")
    assert call(read_file, mine, path="draft.txt") == "mine"
    assert call(read_file, theirs, path="draft.txt") == "theirs"
    assert home(mine) != home(theirs)
    assert {p.name for p in tmp_path.iterdir()} == {home(mine).name, home(theirs).name}


KEYS = ["tg:-100123:45", "slack:T1:C2:1700.1", "http:" + "ab" * 16, "..", ".", "a/b", "A", "a"]


def test_session_names_are_safe_and_distinct() -> None:
    names = [session_dirname(key) for key in [*KEYS, "%41", "=x", "x" * 500, "x" * 501]]
    assert len(set(names)) == len(names)
    assert len({name.lower() for name in names}) == len(names)  # also where case is ignored
    for name in names:
        assert "/" not in name and "." not in name and name not in ("", "..")
        assert len(name) <= MAX_DIRNAME


@given(st.text(), st.text())
def test_two_keys_never_share_a_directory(first: str, second: str) -> None:
    if first != second:
        assert session_dirname(first).lower() != session_dirname(second).lower()


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../x", "outside the workspace"),
        ("a/../../x", "outside the workspace"),
        ("..", "outside the workspace"),
        ("/etc/passwd", "absolute"),
        ("~", "~ is not expanded"),
        ("~/x", "~ is not expanded"),
        ("~root/x", "~ is not expanded"),
        ("a\0b", "NUL byte"),
        ("a\nb", "control characters"),
        ("x" * 256, "longer than 255 bytes"),
        ("a/" * 600, "longer than 1024 bytes"),
    ],
)
def test_paths_that_leave_the_workspace_are_refused(
    ctx: ToolContext, tmp_path: Path, path: str, reason: str
) -> None:
    call(write_file, ctx, path="a/keep.txt", content="kept")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    refused(lambda: call(write_file, ctx, path=path, content="x"), reason)
    refused(lambda: call(read_file, ctx, path=path), reason)
    refused(lambda: call(list_files, ctx, path=path), reason)
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_dot_dot_inside_the_workspace_is_just_a_path(ctx: ToolContext) -> None:
    call(write_file, ctx, path="a/../b.txt", content="b")
    assert (home(ctx) / "b.txt").read_text() == "b"
    refused(lambda: call(write_file, ctx, path=".", content="x"), "names the workspace itself")


@pytest.mark.parametrize("relative", [False, True])
def test_links_to_outside_are_never_followed(
    ctx: ToolContext, outside: Path, relative: bool
) -> None:
    call(write_file, ctx, path="keep.txt", content="kept")
    base = home(ctx)
    file_target = outside / "secret.txt"
    dir_target: Path | str = outside
    if relative:
        file_target = Path(os.path.relpath(file_target, base))
        dir_target = os.path.relpath(outside, base)
    (base / "file_link").symlink_to(file_target)
    (base / "dir_link").symlink_to(dir_target, target_is_directory=True)
    assert (base / "file_link").read_text() == SECRET  # the links work, for anyone following

    refused(lambda: call(read_file, ctx, path="file_link"), "file_link is a symbolic link")
    refused(lambda: call(read_file, ctx, path="dir_link/secret.txt"), "dir_link is a symbolic")
    refused(lambda: call(list_files, ctx, path="dir_link"), "dir_link is a symbolic link")
    refused(lambda: call(write_file, ctx, path="file_link", content="x"), "symbolic link")
    refused(lambda: call(write_file, ctx, path="file_link", content="x", append=True), "link")
    refused(lambda: call(write_file, ctx, path="dir_link/new.txt", content="x"), "symbolic")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET
    listing = call(list_files, ctx)
    assert f"link  file_link -> {file_target} (not followed)" in listing
    assert f"link  dir_link -> {dir_target} (not followed)" in listing


def test_a_directory_swapped_for_a_link_after_a_write_is_not_followed(
    ctx: ToolContext, outside: Path
) -> None:
    """What a race would do between a check and an open: the component is a link by the
    time it is opened, and the walk that opens it with O_NOFOLLOW refuses it."""
    call(write_file, ctx, path="notes/secret.txt", content="my own notes")
    (home(ctx) / "notes").rename(home(ctx) / "old")
    (home(ctx) / "notes").symlink_to(outside)
    refused(lambda: call(read_file, ctx, path="notes/secret.txt"), "notes is a symbolic link")
    refused(lambda: call(write_file, ctx, path="notes/secret.txt", content="x"), "symbolic")
    refused(lambda: call(write_file, ctx, path="notes/deep/x.txt", content="x"), "symbolic")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET


def test_a_workspace_that_is_itself_a_link_is_refused(ctx: ToolContext, outside: Path) -> None:
    home(ctx).parent.mkdir()
    home(ctx).symlink_to(outside)
    refused(lambda: call(read_file, ctx, path="secret.txt"), "the workspace is a symbolic link")
    refused(lambda: call(write_file, ctx, path="x.txt", content="x"), "the workspace is a symbolic")
    refused(lambda: call(list_files, ctx), "the workspace is a symbolic link")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_a_fifo_is_refused_without_hanging(ctx: ToolContext) -> None:
    call(write_file, ctx, path="keep.txt", content="kept")
    os.mkfifo(home(ctx) / "pipe")
    answers: queue.Queue[BaseException | str] = queue.Queue()

    def read() -> None:
        try:
            answers.put(call(read_file, ctx, path="pipe"))
        except BaseException as exc:
            answers.put(exc)

    threading.Thread(target=read, daemon=True).start()
    try:
        answer = answers.get(timeout=60)
    except queue.Empty:
        os.close(os.open(home(ctx) / "pipe", os.O_WRONLY | os.O_NONBLOCK))  # frees the reader
        pytest.fail("read_file hung opening a FIFO")
    assert isinstance(answer, ToolError)
    assert str(answer) == "Refused: pipe is not a regular file (a device, FIFO or socket)."
    refused(lambda: call(write_file, ctx, path="pipe", content="x"), "pipe is not a regular file")
    assert "other pipe  (a device, FIFO or socket; not read)" in call(list_files, ctx)


def test_devices_are_refused(ctx: ToolContext) -> None:
    call(write_file, ctx, path="keep.txt", content="kept")
    (home(ctx) / "zero").symlink_to("/dev/zero")
    refused(lambda: call(read_file, ctx, path="zero"), "zero is a symbolic link")
    try:
        os.mknod(home(ctx) / "null", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip(
            "making a device node needs CAP_MKNOD; "
            "test_a_fifo_is_refused_without_hanging covers the same fstat check"
        )
    refused(lambda: call(read_file, ctx, path="null"), "null is not a regular file")


def test_hard_links_are_not_read(ctx: ToolContext, outside: Path) -> None:
    call(write_file, ctx, path="keep.txt", content="kept")
    os.link(outside / "secret.txt", home(ctx) / "linked.txt")
    refused(lambda: call(read_file, ctx, path="linked.txt"), "has other hard links")


def test_missing_files_and_directories_get_clear_answers(ctx: ToolContext) -> None:
    refused(lambda: call(read_file, ctx, path="nope.txt"), "^Not found: nope.txt does not exist")
    refused(lambda: call(list_files, ctx, path="nope"), "^Not found: nope does not exist")
    assert call(list_files, ctx).startswith("The workspace is empty")
    call(write_file, ctx, path="dir/file.txt", content="x")
    refused(lambda: call(read_file, ctx, path="dir/none.txt"), "^Not found: dir/none.txt")
    refused(lambda: call(read_file, ctx, path="no/none.txt"), "^Not found: no does not exist")
    refused(lambda: call(read_file, ctx, path="dir"), "dir is a directory")
    refused(lambda: call(write_file, ctx, path="dir", content="x"), "dir is a directory")
    refused(lambda: call(read_file, ctx, path="dir/file.txt/x"), "dir/file.txt is a file")
    refused(lambda: call(list_files, ctx, path="dir/file.txt"), "dir/file.txt is a file")


def test_a_call_without_a_workspace_is_refused() -> None:
    """A context that names no workspace folder (one a tool author made for a test, say)
    reaches no directory at all, not some default one."""
    nowhere = ToolContext(SESSION, Sender(id="tg:42"))
    no_workspace = "^This conversation has no workspace"
    refused(lambda: call(read_file, nowhere, path="a.txt"), no_workspace)
    refused(lambda: call(write_file, nowhere, path="a.txt", content="x"), no_workspace)
    refused(lambda: call(list_files, nowhere), no_workspace)
