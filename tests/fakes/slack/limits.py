"""Slack's rate limits: sliding windows per (workspace, method), and per channel for posting.

Slack answers a call over its limit with HTTP 429 and `Retry-After`; an app that calls again
before that time has passed is misbehaving, and the fake counts those calls as violations so a
test can insist on zero. The limits are plain data (`tiers`, `channel_posts`) that a test may
tighten to provoke 429s quickly.
"""

from __future__ import annotations

import math
import time
from collections import deque

from tests.fakes.slack.model import TEAM_ID, ApiError

TIER_1, TIER_2, TIER_3, TIER_4 = 1, 20, 50, 100
WINDOW = 60.0

DEFAULT_TIERS: dict[str, int] = {
    "auth.test": TIER_4,
    "apps.connections.open": TIER_1,
    "chat.postMessage": 300,  # the workspace-wide cap; the per-channel one is below
    "chat.update": TIER_3,
    "chat.delete": TIER_3,
    "chat.startStream": TIER_3,
    "chat.stopStream": TIER_3,
    "chat.appendStream": TIER_4,
    "chat.postEphemeral": TIER_4,
    "assistant.threads.setStatus": TIER_4,
    "assistant.threads.setSuggestedPrompts": TIER_4,
    "assistant.threads.setTitle": TIER_4,
    "files.getUploadURLExternal": TIER_4,
    "files.completeUploadExternal": TIER_4,
}


class RateLimits:
    def __init__(self) -> None:
        self.tiers: dict[str, int] = dict(DEFAULT_TIERS)
        # chat.postMessage into one channel: at most `count` in any `seconds`
        self.channel_posts: tuple[int, float] = (10, 10.0)
        self.rate_limited = 0
        self.violations = 0
        self._calls: dict[str, deque[float]] = {}
        self._until: dict[str, float] = {}

    def check(self, method: str, channel: str | None) -> None:
        """Count the call, or raise a 429 (which does not count) if any of its windows is full."""
        windows = self._windows(method, channel)
        now = time.monotonic()
        early = {key: self._until[key] - now for key, _, _ in windows if key in self._until}
        early = {key: wait for key, wait in early.items() if wait > 0}
        if early:
            self.violations += 1
            raise self.refuse(list(early), max(early.values()))
        waits = {key: self._wait(key, limit, span, now) for key, limit, span in windows}
        full = {key: wait for key, wait in waits.items() if wait > 0}
        if full:
            raise self.refuse(list(full), max(full.values()))
        for key, _, _ in windows:
            self._calls.setdefault(key, deque()).append(now)

    def refuse(self, keys: list[str], wait: float) -> ApiError:
        """A 429 telling the app to wait `wait` seconds (rounded up, at least one); calls to
        these buckets before then are violations."""
        seconds = max(1, math.ceil(wait))
        until = time.monotonic() + seconds
        for key in keys:
            self._until[key] = max(self._until.get(key, 0.0), until)
        self.rate_limited += 1
        return ApiError("ratelimited", status=429, retry_after=seconds)

    def keys(self, method: str, channel: str | None) -> list[str]:
        return [key for key, _, _ in self._windows(method, channel)]

    def _windows(self, method: str, channel: str | None) -> list[tuple[str, int, float]]:
        windows: list[tuple[str, int, float]] = []
        if method in self.tiers:
            windows.append((f"{TEAM_ID}:{method}", self.tiers[method], WINDOW))
        if method == "chat.postMessage" and channel:
            count, seconds = self.channel_posts
            windows.append((f"{TEAM_ID}:{method}:{channel}", count, seconds))
        return windows

    def _wait(self, key: str, limit: int, span: float, now: float) -> float:
        calls = self._calls.setdefault(key, deque())
        while calls and calls[0] <= now - span:
            calls.popleft()
        if len(calls) < limit:
            return 0.0
        return calls[len(calls) - limit] + span - now
