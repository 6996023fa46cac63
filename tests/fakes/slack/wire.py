"""Reading a Web API request as Slack does: the token and the arguments, however they came.

slack_sdk sends the token as `Authorization: Bearer`, and the arguments as JSON, as a form or
in the query string depending on the method; older clients put `token` among the arguments.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from tests.fakes.slack.model import APP_TOKEN, BOT_TOKEN, ApiError

APP_TOKEN_METHODS = {"apps.connections.open"}


def authorize(method: str, token: str) -> None:
    if not token:
        raise ApiError("not_authed")
    wanted = APP_TOKEN if method in APP_TOKEN_METHODS else BOT_TOKEN
    if token == wanted:
        return
    if token in (APP_TOKEN, BOT_TOKEN):
        raise ApiError("not_allowed_token_type")
    raise ApiError("invalid_auth")


def bearer(request: web.Request) -> str:
    header = request.headers.get("Authorization", "")
    return header[len("Bearer ") :].strip() if header.startswith("Bearer ") else ""


async def params_of(request: web.Request) -> dict[str, Any]:
    """Arguments from the query string and the body, JSON or form-encoded, merged."""
    params: dict[str, Any] = dict(request.query)
    if not request.can_read_body:
        return params
    if request.content_type == "application/json":
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return params
        if isinstance(body, dict):
            params.update(body)
    else:
        params.update({k: v for k, v in (await request.post()).items() if isinstance(v, str)})
    return params
