"""What every part of the HTTP API agrees on: who a request acts for."""

from __future__ import annotations

from aiohttp import web

from bot.vocabulary.envelope import Sender

USER = web.RequestKey("user", str)  # who asks: one of the callers `place` names


def api_sender(request: web.Request) -> Sender:
    """Who the API acts for: its identity (`http:token`, `http:local`), an admin, since
    whoever holds the token (or this machine) is the operator."""
    return Sender(id=request[USER], name="web", is_admin=True)
