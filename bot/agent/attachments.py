"""Files a tool made for the person: stored by content, bounded per turn, and announced.

A tool hands its files back beside its text (`bot.tools.base.ToolResult`). Here they become
what every process and platform reads: each goes through the same bounded reader processes
as the files people send (`bot.files.reading`, in the person's lane), which tell its type
from its bytes (an image decoded whole, so a broken or hostile one is not sent) and store it
once by its SHA-256 (`bot.files.store`); a `FileSent` event with its reference follows the
call's result, for the reply to post. The
model reads, under the call's own text, which files went out and which did not (too large,
empty, past the turn's count), so it neither sends one again nor claims one it did not.
What a turn sent is counted in its saved progress, so a turn resumed after a crash keeps the
same count; that it is not posted twice is the reply's business (it remembers what it posted).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from bot.files.reading import Arrived, NotRead, Readers
from bot.tools.base import Attachment
from bot.tools.send_file import size
from bot.vocabulary import events as ev
from bot.vocabulary.files import FileRef
from bot.vocabulary.state import TurnProgress

MAX_NAME = 255
MAX_CAPTION = 1024  # characters: Telegram's caption limit, the smallest of the platforms'


@dataclass(frozen=True)
class SendLimits:
    """How large one file may be (bytes, PARLEY_SEND_FILE_MB) and how many a turn sends
    (PARLEY_SEND_FILES_PER_TURN)."""

    max_bytes: int
    per_turn: int


class Attachments:
    """Takes the files of one tool call out of its result: see the module docstring."""

    def __init__(self, readers: Readers | None, limits: SendLimits) -> None:
        """`readers` None: this process keeps no files (the terminal chat), none is sent."""
        self.readers = readers
        self.limits = limits

    async def take(
        self, call_id: str, files: Sequence[Attachment], turn: TurnProgress, lane: str = ""
    ) -> tuple[str, list[ev.FileSent]]:
        """A note for the model on what happened to each of `files`, and the events of
        those sent, read in `lane` (the person's). Counts what was sent in `turn`."""
        notes: list[str] = []
        sent: list[ev.FileSent] = []
        for file in files:
            name = clean_name(file.name)
            refused = self._refusal(file, turn)
            if refused:
                notes.append(f"{name} was not sent: {refused}.")
                continue
            assert self.readers is not None  # `_refusal` says so when there is none
            try:
                [kept] = await self.readers.read(
                    lane or call_id, [Arrived(file.data, name)], "tool"
                )
            except NotRead as exc:
                notes.append(f"{name} was not sent: {exc.why}.")
                continue
            ref = FileRef(sha256=kept.sha256, media_type=kept.media_type, name=name,
                          size=kept.size)  # fmt: skip
            turn.files_sent += 1
            caption = file.caption.strip()[:MAX_CAPTION]
            sent.append(ev.FileSent(call_id=call_id, file=ref, caption=caption))
            notes.append(f"{name} ({size(ref.size)}) was sent to the person; do not send it again.")
        return "\n".join(notes), sent

    async def _stored(self, file: Arrived, lane: str) -> FileRef | str:
        """The file read and stored, or why it was not."""
        assert self.readers is not None  # `_refusal` says so when there is none
        try:
            [kept] = await self.readers.read(lane, [file], "tool")
        except NotRead as exc:
            return exc.why
        return FileRef(sha256=kept.sha256, media_type=kept.media_type, name=file.name,
                       size=kept.size)  # fmt: skip

    def _refusal(self, file: Attachment, turn: TurnProgress) -> str:
        limits = self.limits
        if self.readers is None:
            return "this conversation cannot receive files"
        if limits.per_turn == 0:
            return "this deployment sends no files (PARLEY_SEND_FILES_PER_TURN is 0)"
        if not file.data:
            return "it is empty"
        if len(file.data) > limits.max_bytes:
            return f"it is {size(len(file.data))}, more than the {size(limits.max_bytes)} allowed"
        if turn.files_sent >= limits.per_turn:
            return f"a turn sends at most {limits.per_turn} files and this one sent them"
        return ""


def clean_name(name: str) -> str:
    """A file's name as every platform may show it: its last path component, no control
    characters, at most 255 characters; "file" when nothing is left."""
    last = name.replace("\\", "/").rsplit("/", 1)[-1]
    kept = "".join(c for c in last if unicodedata.category(c)[0] != "C").strip()
    return kept[:MAX_NAME].lstrip(".") or "file"
