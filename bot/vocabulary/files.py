"""A file a person sent, by reference: envelopes, messages and the record carry this, never
the bytes, which are stored once by their content (`bot.files.store`). A session's hot state
stays small however many photos it holds, and a file sent twice is stored once."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bot.vocabulary.image_edge import LONG_EDGE

__all__ = ["IMAGE_TYPES", "LONG_EDGE", "MB", "FileRef", "SentFile", "size"]
MB = 1_048_576
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


class FileRef(BaseModel):
    """The stored file's SHA-256 (its name in the store), what it is, and what it was called."""

    model_config = ConfigDict(frozen=True)

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    media_type: str = Field(min_length=3, max_length=100)
    name: str = Field(default="", max_length=255)
    size: int = Field(ge=1)
    # A PDF's text, taken out when it arrived and stored beside it: what the models that are
    # not sent the PDF itself read.
    extract: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")

    @property
    def stored(self) -> tuple[str, ...]:
        """The hashes of what the store keeps for it: the file, and its text taken out."""
        return (self.sha256,) if self.extract is None else (self.sha256, self.extract)

    @property
    def is_pdf(self) -> bool:
        return self.media_type == "application/pdf"

    @property
    def is_image(self) -> bool:
        """One the models that see take as an image block."""
        return self.media_type in IMAGE_TYPES


class SentFile(FileRef):
    """A file a tool sent the person, as the call's result keeps it for the conversation's
    history: with the line shown with it (`send_file`'s caption), which a history drawn
    again shows too; left out of the JSON when there is none. A plain `FileRef` is taken
    as one without a caption."""

    model_config = ConfigDict(frozen=True, from_attributes=True)

    caption: str = Field(default="", max_length=1024, exclude_if=lambda caption: not caption)

    @classmethod
    def of(cls, file: FileRef, caption: str) -> SentFile:
        return cls(**file.model_dump(), caption=caption)


def size(count: int) -> str:
    """A file's size as people (and models) read it."""
    if count >= MB:
        return f"{count / MB:.1f} MB"
    if count >= 1024:
        return f"{count / 1024:.0f} KB"
    return "1 byte" if count == 1 else f"{count} bytes"
