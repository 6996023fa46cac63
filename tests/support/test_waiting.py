"""`until`: the seconds a sync or async check took to hold, or a failure naming what and when."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.support.waiting import WITHIN, until


async def test_a_sync_check_is_asked_until_it_holds_and_the_wait_is_returned() -> None:
    asked: list[float] = []

    def third_time() -> bool:
        asked.append(time.monotonic())
        return len(asked) == 3

    waited = await until(third_time, "the third question", every=0.01)
    assert len(asked) == 3
    assert asked[-1] - asked[0] <= waited < WITHIN
    assert waited >= 0.02  # two intervals between three questions


async def test_an_async_check_is_awaited() -> None:
    flag = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, flag.set)

    async def is_set() -> bool:
        await asyncio.sleep(0)
        return flag.is_set()

    assert await until(is_set, "the flag", every=0.01) >= 0.04


async def test_a_check_that_holds_at_once_costs_no_wait() -> None:
    assert await until(lambda: "yes", "something truthy") < 0.05


async def test_a_check_that_never_holds_fails_naming_what_and_the_deadline() -> None:
    with pytest.raises(AssertionError, match=r"not within 0\.2 s: the moon to turn blue"):
        await until(lambda: False, "the moon to turn blue", within=0.2, every=0.01)


async def test_details_are_gathered_only_when_the_wait_fails() -> None:
    told: list[str] = []

    def details() -> str:
        told.append("asked")
        return "the log says: nothing"

    await until(lambda: True, details)
    assert told == []
    with pytest.raises(AssertionError, match="the log says: nothing"):
        await until(lambda: None, details, within=0.05, every=0.01)
    assert told == ["asked"]
