"""Web API calls that stay inside Slack's rate limits across every process.

Slack limits each method per workspace by tier (chat.update is Tier 3: about 50 a minute for
the whole workspace, chat.appendStream Tier 4: about 100) and chat.postMessage to about one
message a second per channel. Every call first takes a token from the shared rate budget for
its method (and channel), so many replies streamed at once by many workers slow down together
instead of running into 429s. Parley uses a share of each tier (`PARLEY_SLACK_RATE_SHARE`) as
a steady rate and keeps the rest as a burst, so no minute ever exceeds the tier. A 429 that
still happens pauses the method for everyone for its Retry-After; a call that must land is
made again, an optional one (an intermediate update) is dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import aiohttp
from aiohttp import ClientError
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.config import ConfigError, Settings
from bot.ratelimit import RateBudget, Scope

log = logging.getLogger(__name__)
T = TypeVar("T")
ATTEMPTS = 5

# Calls a minute per workspace, by method (Slack's tiers 2, 3 and 4).
TIERS: dict[str, int] = {
    "auth.test": 100,
    "chat.update": 50,
    "chat.delete": 50,
    "chat.startStream": 50,
    "chat.stopStream": 50,
    "chat.appendStream": 100,
    "chat.postEphemeral": 100,
    "assistant.threads.setStatus": 100,
    "assistant.threads.setSuggestedPrompts": 100,
    "assistant.threads.setTitle": 100,
}
POST_PER_WORKSPACE = 300  # chat.postMessage a minute, on top of about 1/s per channel
DEFAULT_TIER = 20


def make_client(settings: Settings) -> AsyncWebClient:
    """A Web API client for `SLACK_API_URL` (the public API, Slack's gov cloud, a fake).

    Made in a running event loop: the client keeps one aiohttp session for all its calls."""
    if settings.slack_bot_token is None:
        raise ConfigError("SLACK_BOT_TOKEN: not set (the app's Bot User OAuth Token, xoxb-...)")
    base = settings.slack_api_url.rstrip("/") + "/"
    return AsyncWebClient(
        token=settings.slack_bot_token.get_secret_value(),
        base_url=base,
        session=aiohttp.ClientSession(),  # one connection pool, not a new one per call
    )


def retry_after(exc: SlackApiError) -> float | None:
    """Seconds from a 429's Retry-After header; None if `exc` is not a rate limit."""
    response = exc.response
    if getattr(response, "status_code", None) != 429 and response.get("error") != "ratelimited":
        return None
    headers = getattr(response, "headers", None) or {}
    for name, value in headers.items():
        if name.lower() == "retry-after":
            try:
                return max(1.0, float(value))
            except ValueError:
                break
    return 1.0


def error_of(exc: SlackApiError) -> str:
    return str(exc.response.get("error", "")) if exc.response is not None else ""


class SlackCalls:
    """Makes Web API calls under the shared rate budget; see the module docstring."""

    def __init__(self, client: AsyncWebClient, budget: RateBudget, settings: Settings) -> None:
        self.client = client
        self.budget = budget
        self.share = settings.slack_rate_share

    def _tier(self, name: str, per_minute: float) -> Scope:
        return Scope(
            name,
            rate=per_minute * self.share / 60,
            burst=max(1.0, per_minute * (1 - self.share)),
        )

    def scopes(self, team: str, method: str, channel: str | None = None) -> list[Scope]:
        if method == "chat.postMessage":
            per_channel = Scope(f"slack:{team}:post:{channel}", rate=self.share, burst=2)
            return [per_channel, self._tier(f"slack:{team}:{method}", POST_PER_WORKSPACE)]
        return [self._tier(f"slack:{team}:{method}", TIERS.get(method, DEFAULT_TIER))]

    async def call(
        self,
        method: str,
        team: str,
        *,
        must_land: bool,
        paid: bool = False,
        **params: Any,
    ) -> AsyncSlackResponse | None:
        """The method's response; None when an optional call was dropped for the budget.

        `paid`: the caller already took this call's token from the budget."""
        params = {key: value for key, value in params.items() if value is not None}

        def request() -> Awaitable[AsyncSlackResponse]:
            return self.client.api_call(method, json=params)

        channel = params.get("channel")
        return await self.run(
            method, team, request, must_land=must_land, paid=paid, channel=channel
        )

    async def run(
        self,
        method: str,
        team: str,
        request: Callable[[], Awaitable[T]],
        *,
        must_land: bool,
        paid: bool = False,
        channel: str | None = None,
    ) -> T | None:
        """Make `request` (one call of `method`) when the budget allows; see `call`."""
        scopes = self.scopes(team, method, channel)
        failures = 0
        while True:
            if paid:
                paid = False
            elif must_land:
                await self.budget.take(scopes)
            elif await self.budget.try_take(scopes) > 0:
                return None  # a newer update will follow: skip this one
            try:
                return await request()
            except SlackApiError as exc:
                wait = retry_after(exc)
                if wait is None:
                    raise
                await self.budget.pause(scopes[0], wait)
                log.info("Slack rate limit on %s: waiting %s s", method, wait)
                if not must_land:
                    return None
            except (TimeoutError, ClientError) as exc:
                failures += 1
                if failures >= ATTEMPTS or not must_land:
                    raise
                log.warning("Slack call %s failed (%s); trying again", method, exc)
                await asyncio.sleep(min(0.25 * 2**failures, 8))

    async def quietly(self, method: str, team: str, **params: Any) -> AsyncSlackResponse | None:
        """A call whose failure must not break anything (a status, a note, a settled prompt)."""
        try:
            return await self.call(method, team, must_land=True, **params)
        except Exception as exc:  # cosmetic: the reason is logged, never raised
            log.warning("%s failed: %s", method, _reason(exc))
            return None

    async def optional(self, method: str, team: str, **params: Any) -> AsyncSlackResponse | None:
        """A cosmetic call made only if the budget has room now (a thread status)."""
        try:
            return await self.call(method, team, must_land=False, **params)
        except Exception as exc:
            log.info("%s skipped: %s", method, _reason(exc))
            return None


def _reason(exc: Exception) -> str:
    if isinstance(exc, SlackApiError):
        return error_of(exc) or type(exc).__name__
    return str(exc) or type(exc).__name__
