"""Small things every part of the HTTP adapter agrees on."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.mailbox import PREFIX


def error(code: int, message: str, **extra: Any) -> web.Response:
    """Every error is JSON with an `error` text a person can act on."""
    return web.json_response({"error": message, **extra}, status=code)


def registry_key(session_id: str) -> str:
    """Where an HTTP session's owner and creation time are kept."""
    return f"{PREFIX}:http:session:{session_id}"
