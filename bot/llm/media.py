"""What the providers share about the person's files: their bytes, read from the file store
when a message is first encoded (`PerMessage` keeps the result), as base64.

Reading and encoding an image is file I/O and a few milliseconds of CPU per megabyte, so a
request that carries images is encoded in a thread (`encode_off_loop`), never on the worker's
event loop, where other sessions' replies are streaming."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from typing import Protocol

from bot.vocabulary.files import FileRef
from bot.vocabulary.messages import ImageBlock, Message

# Said to the model in place of an image whose file is gone (retention removed it).
GONE = "[An image the person sent earlier; it is no longer kept.]"


class FileReader(Protocol):
    def read(self, ref: FileRef) -> bytes: ...


def image_base64(block: ImageBlock, files: FileReader | None) -> str | None:
    """The image's bytes as base64, or None when it cannot be read any more."""
    if files is None:
        return None
    try:
        return base64.b64encode(files.read(block.file)).decode("ascii")
    except (LookupError, OSError):
        return None


def carries_images(messages: list[Message]) -> bool:
    return any(type(block) is ImageBlock for message in messages for block in message.content)


async def encode_off_loop(encode: Callable[[], bytes], messages: list[Message]) -> bytes:
    """`encode()`, in a thread when the conversation holds images (see the module doc)."""
    if carries_images(messages):
        return await asyncio.to_thread(encode)
    return encode()
