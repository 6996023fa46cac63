"""How fast each caller may use the HTTP API: a token bucket per caller and client,
`PARLEY_API_RATE` requests a second with bursts of `PARLEY_API_BURST`; beyond it a 429 that
says when to come back.

Only `/api/...` counts: the pages, a platform's webhook and the health checks are not the
API's callers' (a webhook has its platform's own pacing). A caller is whom the request acts
for (`common.USER`: the token's holder, or this machine) and the client it comes from, so
one script in a loop does not starve the dashboard open elsewhere. The buckets are each web
process's own, in memory: a request costs no round trip, and a Redis that is slow or away
neither holds a request up here nor lets the limit go (with several web processes behind a
balancer, each allows the rate). At most `CLIENTS` buckets are kept, the least recently
used going first, so the clients of a scan cannot grow them without bound.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from adapters.http.common import USER
from adapters.web.input import error
from bot.config.settings import Settings

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
CLIENTS = 10_000


class Buckets:
    """Token buckets by name: `rate` tokens a second, at most `burst`."""

    def __init__(self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic):
        self.rate, self.burst, self.clock = rate, burst, clock
        self._kept: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def take(self, name: str) -> float:
        """0 when a token was taken from `name`'s bucket, else the seconds until one is."""
        now = self.clock()
        tokens, then = self._kept.pop(name, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
        self._kept[name] = (tokens - 1 if wait == 0 else tokens, now)
        while len(self._kept) > CLIENTS:
            self._kept.popitem(last=False)
        return wait


def rate_middleware(settings: Settings) -> Any:
    buckets = Buckets(settings.api_rate, float(settings.api_burst))

    @web.middleware
    async def limit(request: web.Request, handler: Handler) -> web.StreamResponse:
        if settings.api_rate <= 0 or not request.path.startswith("/api/"):
            return await handler(request)
        wait = buckets.take(f"{request[USER]} {request.remote or 'unknown'}")
        if wait > 0:
            answer = error(
                429, f"too many requests: at most {settings.api_rate:g} a second; try again shortly"
            )
            answer.headers["Retry-After"] = str(max(1, math.ceil(wait)))
            return answer
        return await handler(request)

    return limit
