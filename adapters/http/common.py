"""What every part of the HTTP API agrees on: who a request acts for, and the id of what it
queues."""

from __future__ import annotations

import uuid

from aiohttp import web

from adapters.web.input import refusal
from bot.vocabulary.envelope import Sender

USER = web.RequestKey("user", str)  # who asks: one of the callers `place` names
MAX_MESSAGE_ID = 200  # an envelope id's own limit


def api_sender(request: web.Request) -> Sender:
    """Who the API acts for: its identity (`http:token`, `http:local`), an admin, since
    whoever holds the token (or this machine) is the operator."""
    return Sender(id=request[USER], name="web", is_admin=True)


def message_id(request: web.Request) -> str:
    """The client's `Idempotency-Key`, or a fresh id when it sent none: what a message or a
    command is queued as, so one sent again is answered once."""
    given = request.headers.get("Idempotency-Key", "")
    if len(given) > MAX_MESSAGE_ID:
        raise refusal(
            web.HTTPBadRequest, f"Idempotency-Key is longer than {MAX_MESSAGE_ID} characters"
        )
    return given or uuid.uuid4().hex
