"""What `/slack/events` checks before slack-bolt sees a request.

Bolt parses the body before it checks the signature, and a timestamp that is not a number,
a body that is not JSON, or JSON that is not an object makes it raise: a 500 and a traceback
for anyone who can reach the URL. So the signature is checked here first, with Slack's own
verifier (a forged, stale or unsigned request: 401, nothing parsed), then the body's shape
(a signed but malformed body: 400), and only then does bolt get the request.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web
from slack_sdk.signature import SignatureVerifier

from adapters.http.common import parse_json, refusal

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
