"""Platform calls paced by the shared rate budget, the same way on every platform.

Each call first takes a token from the budget for the scopes it counts against (a chat, a
workspace's method tier, the whole bot), so replies streamed by many workers slow down
together instead of running into the platform's rate limits. A rate limit that still
happens pauses the call's first scope for every worker for exactly the platform's
`retry_after`. Then a call that must land (a reply's last text, an approval prompt) waits
and is made again; one that may be skipped (an intermediate update) is dropped, because the
next update carries newer text anyway. Network trouble is retried a few times for a call
that must land, and raised at once otherwise.

A platform's calls subclass `PacedCalls` and say only what differs: which exception is a
rate limit (and for how long), which ones are worth trying again, how to name a failure.

Every call is counted here (`bot.telemetry.metrics`), by platform, method and outcome: each request
made by its answer (ok, rate_limited, error), each call skipped for the budget as dropped.
The time a call waited for its tokens, a platform's retry_after included, is observed once
per call that waits for them (one that must land, or a streamed update's pump).
"""

from __future__ import annotations

import asyncio
import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar

from bot.redis.ratelimit import RateBudget, Scope
from bot.telemetry import metrics

log = logging.getLogger(__name__)
T = TypeVar("T")
ATTEMPTS = 5
# A method's name as Parley's code writes it (`sendMessage`, `chat.update`); anything else
# counts as `other`, so a label can never take arbitrary values.
METHOD = re.compile(r"[A-Za-z][A-Za-z0-9_.]{0,63}")


@dataclass
class Slot:
    """A token a reply's pump already took from the budget for `scopes`: the next call made
    in exactly those scopes spends it instead of taking another, so an update costs one
    token however long the pump waited for it."""

    scopes: Sequence[Scope]
    spent: bool = False

    def spend(self, scopes: Sequence[Scope]) -> bool:
        """True once, for the first call in this slot's scopes."""
        if self.spent or list(scopes) != list(self.scopes):
            return False
        self.spent = True
        return True


class PacedCalls(ABC):
    """Makes one platform's calls under the shared rate budget; see the module docstring."""

    # Failures that may pass by themselves (the network, the platform's servers).
    transient: ClassVar[tuple[type[Exception], ...]] = ()
    # The platform, as the metrics name it.
    platform: ClassVar[str] = "other"

    def __init__(self, budget: RateBudget) -> None:
        self.budget = budget

    async def take(self, scopes: Sequence[Scope]) -> float:
        """Wait for a token in `scopes` (see `RateBudget.take`), and count the wait."""
        waited = await self.budget.take(list(scopes))
        metrics.RATE_LIMIT_WAIT_SECONDS.labels(self.platform).observe(waited)
        return waited

    def count(self, method: str, outcome: str) -> None:
        name = method if METHOD.fullmatch(method) else "other"
        metrics.PLATFORM_CALLS.labels(self.platform, name, outcome).inc()

    @abstractmethod
    def retry_after(self, exc: Exception) -> float | None:
        """Seconds the platform asks to wait when `exc` is its rate limit, else None."""

    def reason(self, exc: Exception) -> str:
        """A failure in a few words, for the log."""
        return str(exc) or type(exc).__name__

    async def paced(
        self,
        request: Callable[[], Awaitable[T]],
        scopes: Sequence[Scope],
        *,
        must_land: bool,
        slot: Slot | None = None,
        method: str = "other",
    ) -> T | None:
        """The request's result; None when a call that may be skipped was skipped.

        A call that must land waits for its token; one that may be skipped is made only if
        the budget has room now (or `slot` pays for it). `method` names the call in the
        metrics."""
        failures, waited, took = 0, 0.0, False
        first = list(scopes)
        from_slot = slot is not None and slot.spend(first)
        try:
            while True:
                if from_slot:
                    from_slot = False
                elif must_land:
                    waited += await self.budget.take(first)
                    took = True
                elif await self.budget.try_take(first) > 0:
                    self.count(method, "dropped")
                    return None  # a newer update will follow: skip this one
                try:
                    return await self._made(request, method)
                except self.transient as exc:
                    failures += 1
                    if failures >= ATTEMPTS or not must_land:
                        raise
                    log.warning("platform call failed (%s); trying again", self.reason(exc))
                    await asyncio.sleep(min(0.25 * 2**failures, 8))
                except Exception as exc:
                    wait = self.retry_after(exc)
                    if wait is None:
                        raise
                    await self.budget.pause(first[0], wait)
                    log.info("rate limited on %s: waiting %s s", first[0].name, wait)
                    if not must_land:
                        return None
        finally:
            if took:  # a slot's wait was counted by the pump that took it (`take`)
                metrics.RATE_LIMIT_WAIT_SECONDS.labels(self.platform).observe(waited)

    async def _made(self, request: Callable[[], Awaitable[T]], method: str) -> T:
        """`request` made once, and counted by how the platform answered."""
        try:
            result = await request()
        except Exception as exc:
            limited = self.retry_after(exc) is not None
            self.count(method, "rate_limited" if limited else "error")
            if limited:
                metrics.PLATFORM_RATE_LIMITED.labels(self.platform).inc()
            raise
        self.count(method, "ok")
        return result

    async def paced_quietly(
        self, request: Callable[[], Awaitable[T]], scopes: Sequence[Scope], what: str
    ) -> T | None:
        """A call that must land but whose failure must not break anything (typing, a
        status, answering a press, updating a prompt): the reason is logged, never raised.
        `what` is the method's name, for the log and the metrics."""
        try:
            return await self.paced(request, scopes, must_land=True, method=what)
        except Exception as exc:  # cosmetic: the reason is logged, never raised
            log.warning("%s failed: %s", what, self.reason(exc))
            return None

    async def paced_if_room(
        self, request: Callable[[], Awaitable[T]], scopes: Sequence[Scope], what: str
    ) -> T | None:
        """A cosmetic call made only if the budget has room now; failures are logged.
        `what` is the method's name, for the log and the metrics."""
        try:
            return await self.paced(request, scopes, must_land=False, method=what)
        except Exception as exc:
            log.info("%s skipped: %s", what, self.reason(exc))
            return None
