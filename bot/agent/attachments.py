"""Files a tool made for the person: stored by content, bounded per turn, and announced.

A tool hands its files back beside its text (`bot.tools.base.ToolResult`). Here they become
what every process and platform reads: each goes through the same bounded reader processes
as the files people send (`bot.files.reading`, in the person's lane), which tell its type
from its bytes (an image decoded whole, so a broken or hostile one is not sent) and store it
once by its SHA-256 (`bot.files.store`); a `FileSent` event with its reference follows the
call's result, for the reply to post. The model reads, under the call's own text, which
files went out and which did not (too large, empty, past the turn's count, not readable,
refused by the platform), so it neither sends one again nor claims one it did not. What a
turn sent is counted in its saved progress, so a turn resumed after a crash keeps the same
count; that it is not posted twice is the reply's business (it remembers what it posted).

Whether a file reached the person only the reply that posts it knows, and a platform may
refuse it (Telegram's "file is too big"). So the run is given `Deliveries`, in which whoever
shows its events records what became of each `FileSent` while the run waits at that event;
the tool step writes the calls' results into the context only then (`Taken.note`): "sent to
the person" when it was posted, why not when it was refused, and "handed to the chat to be
posted" when nobody could say (a helper's file, posted later by its parent). The call's
`ToolCallResult` event, which goes out before its files, says the last.

The turn's bounds hold before a byte is read, too: each batch of calls is given the room the
turn has left (`room`: files by PARLEY_SEND_FILES_PER_TURN, and the bytes of the files
`run_python`'s programs leave in ./out/ by the sandbox's scratch size, `SCRATCH_MB`), which its
calls take from as they read, and what they read is counted in the turn's progress
(`count_read`), so a turn resumed after a crash is held to what it has left.

The other way, a tool that works on what the person sent (`generate_image` edits their
picture) is told the turn's images in its context (`turn_images`), by reference: read from
the turn's own messages, so a call resumed after a crash, or approved later, sees the same.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from bot.files.reading import Arrived, NotRead, Readers
from bot.sandbox.limits import SCRATCH_MB
from bot.tools.base import Attachment, FileRoom
from bot.vocabulary import events as ev
from bot.vocabulary.files import MB, FileRef, size
from bot.vocabulary.messages import ImageBlock
from bot.vocabulary.state import SessionState, TurnProgress

MAX_NAME = 255
MAX_CAPTION = 1024  # characters: Telegram's caption limit, the smallest of the platforms'


@dataclass(frozen=True)
class SendLimits:
    """How large one file may be (bytes, PARLEY_SEND_FILE_MB), how many a turn sends
    (PARLEY_SEND_FILES_PER_TURN), and how many bytes a turn's programs hand back from the
    sandbox's ./out/ (its scratch size)."""

    max_bytes: int
    per_turn: int
    out_bytes: int = SCRATCH_MB * MB


class Deliveries:
    """What became of the files a run sent, as the reply that posts them says (see the module
    docstring): for each `FileSent`, "" when it is in the chat, why not when it is not, or
    None when the reply only hands it on; nothing recorded reads as None."""

    def __init__(self) -> None:
        self._said: dict[tuple[str, str], str | None] = {}

    def record(self, event: ev.FileSent, said: str | None) -> None:
        self._said[event.call_id, event.file.sha256] = said

    def said(self, event: ev.FileSent) -> str | None:
        return self._said.get((event.call_id, event.file.sha256))


@dataclass(frozen=True)
class Taken:
    """One call's files, in order: a refusal's line where one was refused, its `FileSent`
    where one was stored for the reply to post."""

    items: tuple[str | ev.FileSent, ...] = ()

    @property
    def sent(self) -> list[ev.FileSent]:
        return [item for item in self.items if isinstance(item, ev.FileSent)]

    def note(self, deliveries: Deliveries | None = None) -> str:
        """A line for the model on each file: what `deliveries` say became of it."""
        return "\n".join(
            item if isinstance(item, str) else _told(item, deliveries) for item in self.items
        )


def _told(event: ev.FileSent, deliveries: Deliveries | None) -> str:
    shown = f"{event.file.name} ({size(event.file.size)})"
    said = deliveries.said(event) if deliveries is not None else None
    if said is None:
        return f"{shown} was handed to the chat to be posted for the person; do not send it again."
    if said:
        return f"{shown} was not sent: {said}."
    return f"{shown} was sent to the person; do not send it again."


class Attachments:
    """Takes the files of one tool call out of its result: see the module docstring."""

    def __init__(self, readers: Readers | None, limits: SendLimits) -> None:
        """`readers` None: this process keeps no files (the terminal chat), none is sent."""
        self.readers = readers
        self.limits = limits

    async def take(
        self, call_id: str, files: Sequence[Attachment], turn: TurnProgress, lane: str = ""
    ) -> Taken:
        """Each of `files` refused with a line for the model, or stored with its event for
        the reply, read in `lane` (the person's). Counts what was stored in `turn`."""
        items: list[str | ev.FileSent] = []
        for file in files:
            name = clean_name(file.name)
            refused = self._refusal(file, turn)
            if refused:
                items.append(f"{name} was not sent: {refused}.")
                continue
            ref = await self._stored(Arrived(file.data, name), lane or call_id)
            if isinstance(ref, str):
                items.append(f"{name} was not sent: {ref}.")
                continue
            turn.files_sent += 1
            caption = file.caption.strip()[:MAX_CAPTION]
            items.append(ev.FileSent(call_id=call_id, file=ref, caption=caption))
        return Taken(tuple(items))

    async def aclose(self) -> None:
        """End the reader kept started for the next file."""
        if self.readers is not None:
            await self.readers.aclose()

    def room(self, turn: TurnProgress) -> FileRoom:
        """The room a batch of `turn`'s calls has for files: what the turn did not use."""
        limits = self.limits
        return FileRoom(limits.per_turn - turn.files_sent, limits.out_bytes - turn.out_bytes)

    @staticmethod
    def count_read(room: FileRoom, turn: TurnProgress) -> None:
        """Count in `turn` the bytes its batch's calls read from the sandbox (`room`)."""
        turn.out_bytes += room.out_read

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


def turn_images(state: SessionState) -> tuple[FileRef, ...]:
    """The images the person sent in the turn in flight, oldest first: those from its start
    mark on (its message, and those that joined it as it ran), for the tools' context
    (`ToolContext.images`). None where the turn has no mark (a state saved before marks)
    or its first message was compacted away: a tool is never handed an older turn's image."""
    mark = state.turn.start if state.turn is not None else None
    ids = [message.id for message in state.messages]
    if mark is None or mark.message not in ids:
        return ()
    first = ids.index(mark.message)
    blocks = list(state.messages[first].content[mark.blocks :])
    blocks += [b for m in state.messages[first + 1 :] if m.role == "user" for b in m.content]
    return tuple(block.file for block in blocks if isinstance(block, ImageBlock))
