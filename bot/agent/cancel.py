"""Cancellation that a turn can observe: a `/stop` ends the turn cleanly, not by exception.

Cancelling the task itself would unwind the loop without the chance to close open tool calls
and keep the text streamed so far; racing each step against an event keeps that chance.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Iterable
from typing import TypeVar

T = TypeVar("T")


async def until_cancelled(
    source: AsyncIterator[T], cancel: asyncio.Event | None
) -> AsyncIterator[T]:
    """Items of `source` until it ends or `cancel` is set; the source is closed either way."""
    if cancel is None:
        async for item in source:
            yield item
        return
    waiter = asyncio.ensure_future(cancel.wait())
    step: asyncio.Future[T] | None = None
    try:
        while not cancel.is_set():
            step = asyncio.ensure_future(anext(source))
            await asyncio.wait({step, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if not step.done():
                return
            try:
                item = step.result()
            except StopAsyncIteration:
                return
            step = None
            yield item
    finally:
        waiter.cancel()
        if step is not None and not step.done():
            step.cancel()
            with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                await step
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
