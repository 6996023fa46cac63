"""`bot.waits.set_within`: a bounded wait on an event that never loses a cancellation, which
Python 3.11's `asyncio.wait_for` does when the event is set in the same round."""

from __future__ import annotations

import asyncio

import pytest

from bot.waits import set_within


async def test_a_cancel_in_the_round_the_event_is_set_still_stops_the_loop() -> None:
    event, rounds = asyncio.Event(), 0

    async def poll() -> None:  # as Telegram's polling waits for an update to be handled
        nonlocal rounds
        while True:
            await set_within(event, 60)
            event.clear()
            rounds += 1

    task = asyncio.create_task(poll())
    await asyncio.sleep(0)  # the loop waits on the event
    event.set()
    task.cancel()
    async with asyncio.timeout(30):  # a lost cancel would leave it waiting for the next
        with pytest.raises(asyncio.CancelledError):
            await task
    assert rounds == 0, "the loop went on after its cancel"


async def test_the_wait_is_bounded_and_says_whether_the_event_came() -> None:
    event = asyncio.Event()
    assert await set_within(event, 0.01) is False
    asyncio.get_running_loop().call_soon(event.set)
    assert await set_within(event, 60) is True
