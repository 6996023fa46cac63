"""Web API calls that stay inside Slack's rate limits across every process.

Slack limits each method per workspace by tier (chat.update is Tier 3: about 50 a minute for
the whole workspace, chat.appendStream Tier 4: about 100) and chat.postMessage to about one
message a second per channel. Every call first takes a token from the shared rate budget for
its method (and channel), so many replies streamed at once by many workers slow down together
instead of running into 429s. Parley uses a share of each tier (`PARLEY_SLACK_RATE_SHARE`) as
a steady rate and keeps the rest as a burst, so no minute ever exceeds the tier. A 429 that
still happens pauses the method for everyone for its Retry-After; a call that must land is
made again, an optional one (an intermediate update) is dropped. The pacing itself is
shared (adapters/chat/pacing.py); this module holds Slack's scopes and its rate-limit answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import aiohttp
from aiohttp import ClientError
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from adapters.chat.pacing import PacedCalls, Slot
from bot.config.settings import ConfigError, Settings
from bot.redis.ratelimit import RateBudget, Scope

T = TypeVar("T")

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
    "files.getUploadURLExternal": 100,
    "files.completeUploadExternal": 100,
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


class SlackCalls(PacedCalls):
    """Web API calls under the shared rate budget, in Slack's scopes; see the module
    docstring."""

    transient = (TimeoutError, ClientError)
    platform = "slack"

    def __init__(self, client: AsyncWebClient, budget: RateBudget, settings: Settings) -> None:
        super().__init__(budget)
        self.client = client
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

    def pace(self, team: str, method: str, channel: str | None = None) -> float:
        """Seconds between two updates of one streamed reply made with `method`: the steady
        rate of its first scope, never its burst, which other replies may need."""
        return 1 / self.scopes(team, method, channel)[0].rate

    def retry_after(self, exc: Exception) -> float | None:
        return retry_after(exc) if isinstance(exc, SlackApiError) else None

    def reason(self, exc: Exception) -> str:
        if isinstance(exc, SlackApiError):
            return error_of(exc) or type(exc).__name__
        return super().reason(exc)

    async def call(
        self, method: str, team: str, *, must_land: bool, slot: Slot | None = None, **params: Any
    ) -> AsyncSlackResponse | None:
        """The method's response; None when a call that may be skipped was skipped."""
        params = {key: value for key, value in params.items() if value is not None}
        request = self._request(method, params)
        channel = params.get("channel")
        return await self.run(
            method, team, request, must_land=must_land, slot=slot, channel=channel
        )

    async def run(
        self,
        method: str,
        team: str,
        request: Callable[[], Awaitable[T]],
        *,
        must_land: bool,
        slot: Slot | None = None,
        channel: str | None = None,
    ) -> T | None:
        """Make `request` (one call of `method`) when the budget allows; see `call`."""
        scopes = self.scopes(team, method, channel)
        return await self.paced(request, scopes, must_land=must_land, slot=slot, method=method)

    async def quietly(self, method: str, team: str, **params: Any) -> AsyncSlackResponse | None:
        """A call whose failure must not break anything (a status, a note, a prompt updated)."""
        params = {key: value for key, value in params.items() if value is not None}
        scopes = self.scopes(team, method, params.get("channel"))
        return await self.paced_quietly(self._request(method, params), scopes, method)

    async def optional(self, method: str, team: str, **params: Any) -> AsyncSlackResponse | None:
        """A cosmetic call made only if the budget has room now (a thread status)."""
        params = {key: value for key, value in params.items() if value is not None}
        scopes = self.scopes(team, method, params.get("channel"))
        return await self.paced_if_room(self._request(method, params), scopes, method)

    def _request(
        self, method: str, params: dict[str, Any]
    ) -> Callable[[], Awaitable[AsyncSlackResponse]]:
        return lambda: self.client.api_call(method, json=params)
