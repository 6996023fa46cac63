"""A stream raced against its turn's cancel: every item in order, nothing once the cancel is
set (however long the source waits), the source read only as its items are taken, its error
raised, and the source closed whatever ends it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from bot.agent.cancel import until_cancelled


class Source:
    """Numbers, made one at a time; after `stall` of them it waits for good."""

    def __init__(self, count: int, stall: int | None = None, fail: int | None = None) -> None:
        self.count, self.stall, self.fail = count, stall, fail
        self.made = 0
        self.closed = False

    async def items(self) -> AsyncIterator[int]:
        try:
            for n in range(self.count):
                if n == self.stall:
                    await asyncio.Event().wait()
                if n == self.fail:
                    raise ValueError("the model went away")
                self.made += 1
                yield n
                await asyncio.sleep(0)
        finally:
            self.closed = True


async def test_every_item_comes_in_order_and_the_source_is_closed() -> None:
    source = Source(5)
    got = [n async for n in until_cancelled(source.items(), asyncio.Event())]
    assert got == [0, 1, 2, 3, 4] and source.closed


async def test_the_source_is_read_only_as_its_items_are_taken() -> None:
    source = Source(100)
    stream = until_cancelled(source.items(), asyncio.Event())
    assert [await anext(stream), await anext(stream)] == [0, 1]
    for _ in range(10):
        await asyncio.sleep(0)
    assert source.made <= 3
    await stream.aclose()  # type: ignore[attr-defined]
    assert source.closed


async def test_a_cancel_ends_a_source_that_waits() -> None:
    source, cancel, two = Source(10, stall=2), asyncio.Event(), asyncio.Event()
    got: list[int] = []

    async def take() -> None:
        async for n in until_cancelled(source.items(), cancel):
            got.append(n)
            if len(got) == 2:
                two.set()

    taking = asyncio.create_task(take())
    await asyncio.wait_for(two.wait(), 5)
    cancel.set()
    await asyncio.wait_for(taking, 5)
    assert got == [0, 1] and source.closed


async def test_nothing_comes_once_the_cancel_is_set() -> None:
    source, cancel = Source(10), asyncio.Event()
    got = []
    async for n in until_cancelled(source.items(), cancel):
        got.append(n)
        cancel.set()
    assert got == [0] and source.closed


async def test_the_sources_error_is_raised_after_its_items() -> None:
    source = Source(10, fail=3)
    got: list[int] = []

    async def take() -> None:
        async for n in until_cancelled(source.items(), asyncio.Event()):
            got.append(n)

    with pytest.raises(ValueError, match="went away"):
        await take()
    assert got == [0, 1, 2] and source.closed
