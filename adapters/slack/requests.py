"""What `/slack/events` checks before slack-bolt sees a request.

Bolt parses the body before it checks the signature, and a timestamp that is not a number,
a body that is not JSON, or JSON that is not an object makes it raise: a 500 and a traceback
for anyone who can reach the URL. So the signature is checked here first, with Slack's own
verifier (a forged, stale or unsigned request: 401, nothing parsed), then the body's shape
(a signed but malformed body: 400), and only then does bolt get the request. A listener that
fails answers JSON too: a 503 with a retry hint while Redis is away (Slack delivers the event
again), a 500 that shows nothing of the internals otherwise.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web
from redis.exceptions import RedisError
from slack_bolt.response import BoltResponse
from slack_sdk.signature import SignatureVerifier

from adapters.web.input import parse_json, refusal

log = logging.getLogger(__name__)
RETRY_AFTER_S = 5
TIMESTAMP = re.compile(r"[0-9]{1,12}")  # ASCII digits: `int` would take "١٢" too


def signed_text(raw: bytes, headers: Any, verifier: SignatureVerifier) -> str:
    """The body as text if Slack signed it; else a JSON 401."""
    timestamp = headers.get("X-Slack-Request-Timestamp", "")
    signature = headers.get("X-Slack-Signature", "")
    try:
        text = raw.decode("utf-8")  # Slack signs UTF-8 text; anything else is not from Slack
    except UnicodeDecodeError:
        text = None
    if (
        text is None
        or not TIMESTAMP.fullmatch(timestamp)
        or not verifier.is_valid(text, timestamp, signature)
    ):
        raise refusal(web.HTTPUnauthorized, "the request is not signed by Slack")
    return text


def check_shape(text: str, content_type: str) -> None:
    """Refuse (400) a signed body bolt could not read: events are a JSON object;
    interactions a form whose `payload` is a JSON object; commands a plain form."""
    if not text:
        return
    if content_type == "application/json" or text.startswith("{"):
        payload: Any = parse_json(text)
    else:
        if "payload" not in text:
            return  # a slash command's fields
        form = dict(parse_qsl(text, keep_blank_values=True))
        if "payload" not in form:
            return
        payload = parse_json(form["payload"], "the payload")
    if not isinstance(payload, dict):
        raise refusal(web.HTTPBadRequest, "a Slack request is a JSON object")


async def listener_failed(error: Exception) -> BoltResponse:
    """Bolt's error handler for the listeners (its argument is matched by name)."""
    headers: dict[str, str | Sequence[str]] = {"Content-Type": "application/json"}
    if isinstance(error, RedisError):
        log.warning("a Slack event was not queued: Redis is unreachable (%s)", error)
        headers["Retry-After"] = str(RETRY_AFTER_S)
        body = {"error": "the message queue is unreachable; try again shortly"}
        return BoltResponse(status=503, body=json.dumps(body), headers=headers)
    log.error("a Slack listener failed", exc_info=error)
    return BoltResponse(status=500, body=json.dumps({"error": "internal error"}), headers=headers)
