"""Cancellation that a turn can observe: a `/stop` ends the turn cleanly, not by exception.

Cancelling the task itself would unwind the loop without the chance to close open tool calls
and keep the text streamed so far; racing each step against an event keeps that chance.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Iterable
from typing import TypeVar, cast

T = TypeVar("T")


class _Failed:
    """What the source raised, for the reader to hand over in its place."""

    def __init__(self, error: Exception) -> None:
        self.error = error


_END = object()  # the source ended, or the cancel came


async def until_cancelled(
    source: AsyncIterator[T], cancel: asyncio.Event | None
) -> AsyncIterator[T]:
    """Items of `source` until it ends or `cancel` is set; the source is closed either way.

    One task reads the source, an item at a time as they are taken, into a queue that the
    cancel ends too: a model's stream has an item for every few words, and racing each
    against the cancel in a task of its own cost a task and a wait on two futures apiece."""
    if cancel is None:
        async for item in source:
            yield item
        return
    items: asyncio.Queue[object] = asyncio.Queue()
    taken = asyncio.Event()

    async def read() -> None:
        try:
            async for item in source:
                taken.clear()
                items.put_nowait(item)
                await taken.wait()
        except Exception as error:
            items.put_nowait(_Failed(error))
        items.put_nowait(_END)

    async def stop() -> None:
        await cancel.wait()
        items.put_nowait(_END)

    reader, stopper = asyncio.ensure_future(read()), asyncio.ensure_future(stop())
    try:
        while (got := await items.get()) is not _END and not cancel.is_set():
            if isinstance(got, _Failed):
                raise got.error
            yield cast(T, got)
            taken.set()
    finally:
        stopper.cancel()
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()


async def wait_all_or_cancel(
    tasks: Iterable[Awaitable[object]], cancel: asyncio.Event | None
) -> bool:
    """Wait for every task; False (with the unfinished ones cancelled) if `cancel` came first."""
    futures = [asyncio.ensure_future(t) for t in tasks]
    if not futures:
        return True
    if cancel is None:
        await asyncio.wait(futures)
        return True
    waiter = asyncio.ensure_future(cancel.wait())
    pending = set(futures)
    try:
        while pending and not cancel.is_set():
            _, pending = await asyncio.wait(pending | {waiter}, return_when=asyncio.FIRST_COMPLETED)
            pending.discard(waiter)
    finally:
        waiter.cancel()
    for future in pending:
        future.cancel()
    if pending:
        await asyncio.wait(pending)
    return not pending
