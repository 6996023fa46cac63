"""redis-py types each command for both its clients (`Awaitable[T] | T`); we use asyncio only.
Its replies are bytes, or str on a client that decodes them."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def done(value: Awaitable[T] | T) -> T:
    """Await a command of the asyncio client with its precise result type."""
    if isinstance(value, Awaitable):
        return await value
    return value


def text(value: object) -> str:
    """A reply as text, whether the client decoded it or not."""
    return value.decode() if isinstance(value, bytes) else str(value)
