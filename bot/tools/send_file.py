"""`send_file`: a file of the session's workspace, sent to the person where the conversation is.

The path is opened the way every workspace tool opens one (`workspace_paths`: component by
component, never through a link, a regular file with no other hard link), and the size is read
from the open file before a byte of it is, so a file too large is refused at once, as is any
file once its turn has sent the files it may (`ToolContext.files`); then no more than that size
is read, however the file changes meanwhile. The bytes go back in a `ToolResult`; the agent
stores them and the reply posts them (a picture when the bytes are an image the platform shows,
else a file to download). The call has an effect people see, so it is not read-only: a turn
resumed after a crash does not run it blindly again, and the reply remembers what it posted in
any case.
"""

from __future__ import annotations

import os
from typing import Annotated

from pydantic import Field

from bot.tools.base import (
    Attachment,
    FileRoom,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    tool,
)
from bot.tools.workspace_paths import directory, parse_path, regular_file, shown, workspace_root
from bot.vocabulary.files import size

CHUNK = 1 << 20
MAX_CAPTION = 1024  # characters: Telegram's caption limit, the smallest of the platforms'


def send_file_tool(max_bytes: int) -> Tool:
    """`send_file` for files up to `max_bytes` (PARLEY_SEND_FILE_MB)."""

    @tool
    def send_file(
        ctx: ToolContext,
        path: Annotated[
            str, Field(description="Path of the file in the workspace, such as out/report.csv")
        ],
        caption: Annotated[
            str, Field(max_length=MAX_CAPTION, description="A line shown with the file")
        ] = "",
    ) -> ToolResult:
        """Send a file from this conversation's workspace to the person, into the chat: an
        image shows as a picture, anything else as a file to download. Use it when the person
        should get the file itself (a report, a table, a chart), not its text."""
        parts = parse_path(path)
        if not parts:
            raise ToolError("Refused: the path names the workspace itself; give a file name.")
        where = shown(parts)
        if ctx.workspace is None:
            raise ToolError("This conversation has no workspace.")
        root = workspace_root(ctx.workspace)
        if root is None:
            raise ToolError(f"Not found: {where} does not exist in the workspace (it is empty).")
        try:
            with (
                directory(root, parts[:-1]) as parent,
                regular_file(parent, parts[-1], where) as (fd, info),
            ):
                if info.st_size == 0:
                    raise ToolError(f"Refused: {where} is empty; there is nothing to send.")
                if info.st_size > max_bytes:
                    raise ToolError(
                        f"Refused: {where} is {size(info.st_size)}; a file sent may be at "
                        f"most {size(max_bytes)}."
                    )
                data = _read_in_room(ctx.files, fd, info.st_size, where)
        finally:
            os.close(root)
        sent = Attachment(parts[-1], data, caption)
        return ToolResult(f"Sending {where} from the workspace.", (sent,))

    return send_file


def _read_in_room(room: FileRoom | None, fd: int, length: int, where: str) -> bytes:
    """The file's `length` bytes, once the turn has room for one more file (taken from it)."""
    taken = room.take(1) if room is not None else (1, 0)
    if not taken[0]:
        raise ToolError(
            f"Refused: {where} was not sent; this turn may send no more files (it sent "
            "those it may)."
        )
    try:
        data = _read(fd, length, where)
    except BaseException:
        if room is not None:
            room.settle(taken, 0)
        raise
    return data


def _read(fd: int, length: int, where: str) -> bytes:
    """The file's `length` bytes (its size when it was opened), never more."""
    chunks: list[bytes] = []
    left = length
    while left > 0 and (chunk := os.read(fd, min(left, CHUNK))):
        chunks.append(chunk)
        left -= len(chunk)
    if left or os.fstat(fd).st_size != length:
        raise ToolError(f"Refused: {where} changed while it was read; try again.")
    return b"".join(chunks)
