"""What the providers share about the person's files: their bytes, read from the file store
when a message is first encoded (`PerMessage` keeps the result), as base64 (an image, a PDF
for Anthropic) or as text (a text file, a PDF's text taken out when it arrived), cut at
`MAX_SHOWN` characters with a line saying how much is left out.

Reading and encoding a file is file I/O and a few milliseconds of CPU per megabyte, so a
request that carries files is encoded in a thread (`encode_off_loop`), never on the worker's
event loop, where other sessions' replies are streaming."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable, Sequence
from typing import Protocol

from bot.llm.base import ModelRequest
from bot.vocabulary.files import FileRef
from bot.vocabulary.messages import Attached, DocumentBlock, ImageBlock, Message, PerMessage

# Said to the model in place of a file that is gone (retention removed it).
GONE = "[A file the person sent earlier; it is no longer kept.]"
# Said in place of an image to a model that refused one (a model without vision).
UNSEEN = "[An image the person sent, “{name}”: this model cannot see images.]"
MAX_SHOWN = 200_000  # characters of a document's text a model is sent


class FileReader(Protocol):
    def read(self, ref: FileRef) -> bytes: ...

    def read_extract(self, ref: FileRef) -> bytes: ...


def file_base64(block: Attached, files: FileReader | None) -> str | None:
    """The file's bytes as base64, or None when it cannot be read any more."""
    if files is None:
        return None
    try:
        return base64.b64encode(files.read(block.file)).decode("ascii")
    except (LookupError, OSError):
        return None


def file_text(block: DocumentBlock, files: FileReader | None) -> str | None:
    """A document's text (a PDF's as taken out), at most `MAX_SHOWN` characters, or None
    when it cannot be read any more."""
    if files is None:
        return None
    ref = block.file
    try:
        data = files.read_extract(ref) if ref.extract else files.read(ref)
    except (LookupError, OSError):
        return None
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if len(text) > MAX_SHOWN:
        left = len(text) - MAX_SHOWN
        text = f"{text[:MAX_SHOWN]}\n[… {left:,} more characters of this file are not shown]"
    return text


def titled(block: DocumentBlock, text: str) -> str:
    """A document's text as one text part, under a line naming the file."""
    ref = block.file
    return f"[File “{ref.name or 'unnamed'}” ({ref.media_type})]\n{text}"


def unseen(block: ImageBlock) -> dict[str, str]:
    """The text part that stands for an image to a model that cannot see it."""
    return {"type": "text", "text": UNSEEN.format(name=block.file.name or "unnamed")}


def carries_images(messages: Sequence[Message]) -> bool:
    return any(isinstance(block, ImageBlock) for message in messages for block in message.content)


def carries_files(messages: Sequence[Message]) -> bool:
    kinds = (ImageBlock, DocumentBlock)
    return any(type(block) in kinds for message in messages for block in message.content)


async def encode_off_loop(
    encode: Callable[[], bytes], request: ModelRequest, kept: PerMessage[str]
) -> bytes:
    """`encode()`, in a thread when a message it encodes anew holds files: those `kept` does
    not keep yet, and the last, which carries the cache breakpoint (see the module doc).
    Only those are looked at, so a long conversation is not walked at every call."""
    messages = request.messages
    if carries_files([*kept.fresh(messages), *messages[-1:]]):
        return await asyncio.to_thread(encode)
    return encode()
