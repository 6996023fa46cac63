"""`generate_image`: a picture made from the model's description, or the person's own picture
changed as it says, at an OpenAI-compatible images endpoint, sent to the person as `send_file`
sends a file.

Offered only where the operator named a model (PARLEY_IMAGE_MODEL): without one, the model is
not offered a tool that could only fail. The tool is built with what it needs and nothing more
(`image_tools`): the endpoint with its key, which no other tool sees, and the file store, where
the images the person sent in the turn are read (the context names them, `ToolContext.images`).

The picture goes back in a `ToolResult`, so it takes the path every file a tool makes takes
(`bot.agent.attachments`): read whole by a bounded reader process (an image decoded, so a
damaged or hostile one is not sent), stored by content, posted once by the reply, counted
against the turn's files. The turn's room for one more file is taken before the endpoint is
called, so a turn that may send no more files spends nothing on one. The call costs money and
its picture is seen, so the tool is not read-only: the executor never runs it again on its
own, and a turn resumed after a crash does not run it blindly. The tokens the endpoint says
it used (`usage`) are the turn's, so they count against the person's daily budget.

The SDK, and Pillow (through `bot.files.images`), are imported by the first call, in its
thread (`image_api`): a process that only lists the tools starts without them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, SecretStr

from bot.files.store import FileMissing, FileStore
from bot.tools.base import Tool, ToolContext, ToolError, ToolResult, tool

# Named, not left to the SDK, which would read OPENAI_BASE_URL: the chat model's server.
OPENAI = "https://api.openai.com/v1"
NAME = "generate_image"
MAX_PROMPT = 4000  # characters: DALL·E 3's; GPT image models take 32,000 (DALL·E 2: 1,000)
SLACK_S = 10.0  # the call's time beyond the endpoint's: the person's image read, the answer's
# What an edit sends: the types OpenAI's edits take, and the name each goes by.
EDITABLE = {"image/png": "image.png", "image/jpeg": "image.jpg", "image/webp": "image.webp"}
Size = Literal["1024x1024", "1536x1024", "1024x1536", "auto"]


@dataclass(frozen=True)
class ImageService:
    """The images endpoint the operator named (PARLEY_IMAGE_*): its model, its address, its
    key (never shown: `SecretStr`; None, no key, a local server's), how long one request may
    take, and the largest picture kept (PARLEY_SEND_FILE_MB, as every file a tool sends)."""

    model: str
    base_url: str
    key: SecretStr | None
    timeout: float
    max_bytes: int


@dataclass(frozen=True)
class Source:
    """The person's image an edit changes: its bytes, what it is, and the name it is sent by."""

    name: str
    data: bytes
    media_type: str

    def __repr__(self) -> str:  # never the bytes
        return f"Source({self.name!r}, {len(self.data)} bytes, {self.media_type!r})"


def image_tools(service: ImageService | None, store: FileStore) -> list[Tool]:
    """`generate_image` on `service`, reading the person's images from `store`; none without
    a service (PARLEY_IMAGE_MODEL unset)."""
    return [] if service is None else [_generate_image(service, store)]


def _generate_image(service: ImageService, store: FileStore) -> Tool:
    @tool(name=NAME, timeout=service.timeout + SLACK_S)
    async def generate_image(
        ctx: ToolContext,
        prompt: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_PROMPT,
                description="What the picture shows, in detail: subject, setting, style, "
                "colours, text in it; for an edit, what to change",
            ),
        ],
        size: Annotated[
            Size, Field(description="Width x height in pixels; auto lets the model choose")
        ] = "1024x1024",
        edit: Annotated[
            bool,
            Field(
                description="true: change the image the person sent with their message (the "
                "last one, if several) instead of drawing a new one"
            ),
        ] = False,
    ) -> ToolResult:
        """Make a picture from a description and send it to the person, into the chat; with
        edit, change the picture the person sent instead. Use it when the person asks for a
        picture, a drawing, a logo or a change to their photo. The picture is sent by this
        call: do not send it again, and do not claim one was made when the result says not."""
        source = _person_image(ctx, store) if edit else None
        room = ctx.files
        taken = room.take(1) if room is not None else (1, 0)
        if not taken[0]:
            raise ToolError(
                "Not made: this turn may send no more files (it sent those it may); make the "
                "picture in a later message."
            )
        api = importlib.import_module("bot.tools.image_api")  # the SDK, at the first call
        try:
            made: ToolResult = await api.made(service, prompt, size, source)
        except BaseException:
            if room is not None:
                room.settle(taken, 0)
            raise
        return made

    return generate_image


def _person_image(ctx: ToolContext, store: FileStore) -> Source:
    """The image an edit changes: the last one the person sent in this turn."""
    if not ctx.images:
        raise ToolError(
            "Not made: edit changes an image the person sent with this message, and none "
            "came with it. Draw a new picture without edit, or ask them to send theirs."
        )
    ref = ctx.images[-1]
    name = EDITABLE.get(ref.media_type)
    if name is None:
        raise ToolError(
            f"Not made: the person's image is {ref.media_type}; an edit takes PNG, JPEG or WebP."
        )
    try:
        data = store.read(ref)
    except FileMissing:
        raise ToolError(
            "Not made: the person's image is no longer kept here; ask them to send it again."
        ) from None
    return Source(name, data, ref.media_type)
