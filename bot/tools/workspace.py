"""`read_file`, `write_file` and `list_files`: a directory of files for each session.

Each chat, forum topic, Slack thread or HTTP session gets a workspace under
PARLEY_WORKSPACE_DIR where the model keeps notes, drafts and data between turns. Another
session's workspace, and everything outside, is out of reach: `workspace_paths` opens every
path without following a link. Writes replace files atomically and are held to
PARLEY_WORKSPACE_QUOTA_MB for the whole workspace; they need a person's approval by default,
since a file the model writes may be read again by a later turn as if it were notes. A
workspace goes with its session, and retention removes its files older than the window
(`workspace_upkeep`).

The file I/O blocks, so the tools run in threads (`isolation="thread"`), off the worker's loop.
What `read_file` and `list_files` return may have been put there by someone else, so it
reaches the model marked as data. The session's folder comes with each call
(`ToolContext.workspace`); the quota and the output limit, the tools are built with
(`workspace_tools`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field

from bot.tools.base import Tool, ToolContext, ToolError, tool
from bot.tools.workspace_io import (
    existing_size,
    read_all,
    read_window,
    replace,
    usage,
    writable,
)
from bot.tools.workspace_paths import (
    directory,
    parse_path,
    regular_file,
    shown,
    workspace_root,
)

MAX_CONTENT = 1_000_000  # characters in one write
MAX_ENTRIES = 200  # entries one listing shows
MIN_READ = 64
MARGIN = 400  # of the output limit, for read_file's note and the data mark
PATH = Field(description="Path relative to the workspace, such as notes/todo.md")


def _file_path(path: str) -> tuple[str, ...]:
    parts = parse_path(path)
    if not parts:
        raise ToolError("Refused: the path names the workspace itself; give a file name.")
    return parts


def _size(count: float) -> str:
    if count >= 1_048_576:
        return f"{count / 1_048_576:,.2f} MB"
    return "1 byte" if count == 1 else f"{int(count):,} bytes"


@dataclass(frozen=True)
class WorkspaceLimits:
    """How much a workspace may hold (PARLEY_WORKSPACE_QUOTA_MB, in bytes here), and how
    much of a tool's answer the model is shown (PARLEY_TOOL_OUTPUT_LIMIT, in characters):
    `read_file` reads no more than fits."""

    quota: int
    output_limit: int


def workspace_tools(limits: WorkspaceLimits) -> list[Tool]:
    """`read_file`, `write_file` and `list_files`, within `limits`."""
    return [_read_file(limits), _write_file(limits), _list_files(limits)]


def _folder(ctx: ToolContext) -> Path:
    if ctx.workspace is None:
        raise ToolError("This conversation has no workspace.")
    return ctx.workspace


def _read_file(limits: WorkspaceLimits) -> Tool:
    @tool(read_only=True, untrusted=True)
    def read_file(
        ctx: ToolContext,
        path: Annotated[str, PATH],
        offset: Annotated[
            int, Field(ge=0, description="Byte to start at, from a previous read")
        ] = 0,
        limit: Annotated[
            int | None,
            Field(ge=MIN_READ, description="Most bytes to read; the most allowed if omitted"),
        ] = None,
    ) -> str:
        """Read a text file from this conversation's workspace. Long files come in parts: the
        answer ends with the offset to read the next part from."""
        parts = _file_path(path)
        where = shown(parts)
        budget = max(MIN_READ, limits.output_limit - MARGIN)
        root = workspace_root(_folder(ctx))
        if root is None:
            raise ToolError(f"Not found: {where} does not exist in the workspace (it is empty).")
        try:
            with (
                directory(root, parts[:-1]) as parent,
                regular_file(parent, parts[-1], where) as file,
            ):
                fd, info = file
                window = read_window(fd, info.st_size, offset, min(limit or budget, budget), where)
        finally:
            os.close(root)
        if window.size == 0:
            return f"({where} is empty)"
        notes = []
        if window.bad:
            notes.append(f"{window.bad:,} bytes that are not UTF-8 are shown as \ufffd")
        if window.start > 0 or window.end < window.size:
            notes.append(f"bytes {window.start:,} to {window.end:,} of {window.size:,} shown")
        if window.end < window.size:
            notes.append(f"more: read_file with offset={window.end}")
        return window.text + (f"\n[{'; '.join(notes)}]" if notes else "")

    return read_file


def _write_file(limits: WorkspaceLimits) -> Tool:
    @tool(sensitive=True)
    def write_file(
        ctx: ToolContext,
        path: Annotated[str, PATH],
        content: Annotated[str, Field(max_length=MAX_CONTENT, description="Text to write")],
        append: Annotated[bool, Field(description="Add to the end instead of replacing")] = False,
    ) -> str:
        """Write a text file in this conversation's workspace, making its folders as needed. It
        replaces the file unless append is true. The workspace has a size quota."""
        parts = _file_path(path)
        where = shown(parts)
        data = content.encode("utf-8", "replace")
        with (
            writable(_folder(ctx)) as root,
            directory(root, parts[:-1], create=True) as parent,
        ):
            old = existing_size(parent, parts[-1], where)
            if append and old:
                with regular_file(parent, parts[-1], where) as (fd, _):
                    data = read_all(fd) + data
            used, allowed = usage(root), limits.quota
            after = used - old + len(data)
            if after > allowed:
                raise ToolError(
                    f"Refused: workspace quota exceeded: {where} would bring it to "
                    f"{after:,} bytes of {allowed:,} allowed ({used:,} used now)."
                )
            replace(parent, parts[-1], data)
        verb = "Appended to" if append and old else "Wrote"
        return (
            f"{verb} {where}: {_size(len(data))} (workspace: {_size(after)} of {_size(allowed)})."
        )

    return write_file


def _list_files(limits: WorkspaceLimits) -> Tool:
    @tool(read_only=True, untrusted=True)
    def list_files(
        ctx: ToolContext,
        path: Annotated[str, Field(description="Folder relative to the workspace")] = ".",
    ) -> str:
        """List a folder of this conversation's workspace: names, kinds and sizes, sorted by
        name. Links are shown, never followed."""
        parts = parse_path(path)
        where = shown(parts)
        root = workspace_root(_folder(ctx))
        if root is None:
            if parts:
                raise ToolError(
                    f"Not found: {where} does not exist in the workspace (it is empty)."
                )
            return f"The workspace is empty (quota {_size(limits.quota)})."
        try:
            with directory(root, parts) as fd:
                names = sorted(os.listdir(fd))
                lines = [_entry(fd, name) for name in names[:MAX_ENTRIES]]
            used = usage(root)
        finally:
            os.close(root)
        if len(names) > MAX_ENTRIES:
            lines.append(f"... and {len(names) - MAX_ENTRIES:,} more entries")
        total = f"workspace {_size(used)} of {_size(limits.quota)}"
        if not names:
            return f"{where} is empty ({total})."
        return "\n".join([f"{where}: {len(names):,} entries; {total}", *lines])

    return list_files


def _entry(dir_fd: int, name: str) -> str:
    """One line of a listing: the kind, the name, and the size or where a link points."""
    label = name if name.isprintable() else repr(name)
    try:
        info = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return f"gone  {label}"
    if stat.S_ISDIR(info.st_mode):
        return f"dir   {label}/"
    if stat.S_ISREG(info.st_mode):
        return f"file  {label}  {_size(info.st_size)}"
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(name, dir_fd=dir_fd)
        return f"link  {label} -> {target if target.isprintable() else repr(target)} (not followed)"
    return f"other {label}  (a device, FIFO or socket; not read)"
