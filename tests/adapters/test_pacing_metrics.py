"""What the paced platform calls count, on the real rate budget in a real Redis: each request
by how the platform answered, each call skipped for the budget as dropped, and the time a
call waited for its tokens (a platform's retry_after included)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from redis.asyncio import Redis

from adapters.chat.pacing import PacedCalls, Slot
from bot.redis.ratelimit import RateBudget, Scope
from bot.telemetry import metrics

PLATFORM = "test-platform"


class SlowDown(Exception):
    """The platform's rate limit, with its retry_after."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"retry after {seconds} s")
        self.seconds = seconds


class Flaky(Exception):
    """A failure that may pass by itself."""


class Platform:
    """The platform's side: answers with whatever `answers` says next, then "done"."""

    def __init__(self, *answers: Exception) -> None:
        self.answers = list(answers)
        self.calls: list[float] = []

    def request(self) -> Callable[[], Awaitable[str]]:
        async def made() -> str:
            self.calls.append(time.monotonic())
            if self.answers:
                raise self.answers.pop(0)
            return "done"

        return made


class Calls(PacedCalls):
    transient = (Flaky,)
    platform = PLATFORM

    def retry_after(self, exc: Exception) -> float | None:
        return exc.seconds if isinstance(exc, SlowDown) else None


class Counts:
    """The test platform's metrics now, to compare with later."""

    def __init__(self) -> None:
        self.calls = {
            (method, outcome): self.value("parley_platform_calls_total", method, outcome)
            for method in ("send", "other", "typing")
            for outcome in ("ok", "rate_limited", "error", "dropped")
        }
        self.limited = self.value("parley_platform_rate_limited_total")
        self.waits = self.value("parley_rate_limit_wait_seconds_count")
        self.waited = self.value("parley_rate_limit_wait_seconds_sum")

    @staticmethod
    def value(name: str, method: str = "", outcome: str = "") -> float:
        labels = {"platform": PLATFORM}
        if method:
            labels |= {"method": method, "outcome": outcome}
        return metrics.REGISTRY.get_sample_value(name, labels) or 0.0

    def since(self, before: Counts) -> dict[str, object]:
        """What changed, the calls by (method, outcome) that moved only."""
        moved = {k: v - before.calls[k] for k, v in self.calls.items() if v != before.calls[k]}
        return {
            "calls": moved,
            "limited": self.limited - before.limited,
            "waits": self.waits - before.waits,
        }


@pytest.fixture
async def calls(redis_url: str) -> AsyncIterator[Calls]:
    redis = Redis.from_url(redis_url)
    yield Calls(RateBudget(redis))
    await redis.aclose()


CHAT = [Scope("test:chat", rate=50, burst=5)]


async def test_a_call_refused_by_a_rate_limit_then_made_counts_both_and_its_wait(
    calls: Calls,
) -> None:
    platform = Platform(SlowDown(0.4))
    before = Counts()
    assert await calls.paced(platform.request(), CHAT, must_land=True, method="send") == "done"
    after = Counts()
    assert after.since(before) == {
        "calls": {("send", "rate_limited"): 1, ("send", "ok"): 1},
        "limited": 1,
        "waits": 1,  # one call, observed once, however many tries it took
    }
    first, second = platform.calls
    assert second - first >= 0.35  # the platform's retry_after was kept
    # and counted as the call's wait: from when the refusal was recorded, so on a busy
    # machine a little less than the retry_after, never more than the calls' interval
    assert 0 < after.waited - before.waited <= second - first


async def test_a_call_that_may_be_skipped_is_dropped_without_a_request_or_a_wait(
    calls: Calls,
) -> None:
    platform = Platform()
    tight = [Scope("test:tight", rate=0.5, burst=1)]
    before = Counts()
    assert await calls.paced(platform.request(), tight, must_land=False, method="send") == "done"
    assert await calls.paced(platform.request(), tight, must_land=False, method="send") is None
    assert len(platform.calls) == 1
    assert Counts().since(before) == {
        "calls": {("send", "ok"): 1, ("send", "dropped"): 1},
        "limited": 0,
        "waits": 0,
    }


async def test_a_skippable_call_refused_by_a_rate_limit_counts_the_refusal_only(
    calls: Calls,
) -> None:
    platform = Platform(SlowDown(0.2))
    before = Counts()
    assert await calls.paced(platform.request(), CHAT, must_land=False, method="send") is None
    assert Counts().since(before) == {
        "calls": {("send", "rate_limited"): 1},
        "limited": 1,
        "waits": 0,
    }


async def test_failures_count_as_errors_whether_tried_again_or_raised(calls: Calls) -> None:
    before = Counts()
    flaky = Platform(Flaky("connection reset"))
    assert await calls.paced(flaky.request(), CHAT, must_land=True, method="send") == "done"
    broken = Platform(ValueError("chat not found"))
    with pytest.raises(ValueError, match="chat not found"):
        await calls.paced(broken.request(), CHAT, must_land=True, method="send")
    assert Counts().since(before) == {
        "calls": {("send", "error"): 2, ("send", "ok"): 1},
        "limited": 0,
        "waits": 2,
    }


async def test_quiet_calls_count_under_their_name_and_odd_names_as_other(calls: Calls) -> None:
    before = Counts()
    await calls.paced_quietly(Platform().request(), CHAT, "typing")
    await calls.paced_quietly(Platform(ValueError("no")).request(), CHAT, "typing")
    await calls.paced(Platform().request(), CHAT, must_land=True, method="chat 42: hi")
    await calls.paced(Platform().request(), CHAT, must_land=True)
    assert Counts().since(before)["calls"] == {
        ("typing", "ok"): 1,
        ("typing", "error"): 1,
        ("other", "ok"): 2,
    }


async def test_a_pumps_wait_is_counted_once_and_its_slot_not_again(calls: Calls) -> None:
    tight = [Scope("test:pump", rate=4, burst=1)]
    before = Counts()
    assert await calls.take(tight) == 0
    waited = await calls.take(tight)  # the bucket is empty: about a quarter of a second
    slot = Slot(tight)
    platform = Platform()
    assert await calls.paced(platform.request(), tight, must_land=False, slot=slot) == "done"
    after = Counts()
    assert after.since(before) == {"calls": {("other", "ok"): 1}, "limited": 0, "waits": 2}
    assert waited > 0.1
    assert after.waited - before.waited == pytest.approx(waited)
