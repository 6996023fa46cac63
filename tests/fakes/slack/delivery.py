"""Handing events and interactions to the app's Request URL, signed and retried like Slack.

Slack signs each request with the signing secret over `v0:{timestamp}:{body}`, waits
`ack_timeout` (3 s in production) for a 2xx, and otherwise retries up to three times with
`X-Slack-Retry-Num` and `X-Slack-Retry-Reason`. Every attempt is recorded, so a test can see
how fast the app acknowledged and whether it answered a retry.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import aiohttp

from tests.fakes.slack.events import INTERACTIVE
from tests.fakes.slack.model import SIGNING_SECRET, Delivery

if TYPE_CHECKING:
    from tests.fakes.slack.server import FakeSlack

MAX_RETRIES = 3


def signature(secret: str, timestamp: int, raw: bytes) -> str:
    base = f"v0:{timestamp}:".encode() + raw
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def encode(body: dict[str, Any]) -> tuple[bytes, str]:
    """Events go as JSON; interactions as a form with one field, `payload`, holding JSON;
    slash commands as a form of their fields."""
    if "command" in body:
        return urlencode(body).encode(), "application/x-www-form-urlencoded"
    if body.get("type") in INTERACTIVE:
        form = urlencode({"payload": json.dumps(body, separators=(",", ":"))})
        return form.encode(), "application/x-www-form-urlencoded"
    return json.dumps(body, separators=(",", ":")).encode(), "application/json"


class Courier:
    def __init__(self, fake: FakeSlack) -> None:
        self.fake = fake
        self.session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()

    async def post(
        self,
        body: dict[str, Any],
        *,
        retry_num: int = 0,
        retry: bool = True,
        reason: str = "http_timeout",
        secret: str | None = None,
        timestamp: int | None = None,
    ) -> tuple[int, str]:
        """POST `body`, retrying until a 2xx or three retries; the last (status, answer)."""
        url = self.fake.events_url
        if url is None:
            raise AssertionError("set fake.events_url before delivering events over HTTP")
        if self.session is None:
            self.session = aiohttp.ClientSession()
        raw, content_type = encode(body)
        attempt = 0
        while True:
            stamp = int(time.time()) if timestamp is None else timestamp
            headers = {
                "Content-Type": content_type,
                "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
                "X-Slack-Request-Timestamp": str(stamp),
                "X-Slack-Signature": signature(secret or SIGNING_SECRET, stamp, raw),
            }
            if retry_num > 0:
                headers["X-Slack-Retry-Num"] = str(retry_num)
                headers["X-Slack-Retry-Reason"] = reason
            status, answer, reason = await self._attempt(url, raw, headers, body, retry_num)
            if 200 <= status < 300 or not retry or attempt >= MAX_RETRIES:
                return status, answer
            delays = self.fake.retry_delays
            await asyncio.sleep(delays[min(attempt, len(delays) - 1)] if delays else 0)
            attempt += 1
            retry_num += 1

    async def _attempt(
        self, url: str, raw: bytes, headers: dict[str, str], body: dict[str, Any], retry_num: int
    ) -> tuple[int, str, str]:
        """One POST: (status, answer, the retry reason should it fail); 0 is no answer."""
        assert self.session is not None
        started = time.monotonic()
        status, answer, reason = 0, "", "http_timeout"
        try:
            async with asyncio.timeout(self.fake.ack_timeout):
                async with self.session.post(url, data=raw, headers=headers) as response:
                    status, answer = response.status, await response.text()
                    reason = "http_error"
        except TimeoutError:
            pass
        except aiohttp.ClientError:
            reason = "connection_failed"
        elapsed = time.monotonic() - started
        self.fake.deliveries.append(Delivery(body, headers, status, elapsed, retry_num, answer))
        return status, answer, reason
