"""Which HTTP sessions exist: the one check every route that names an HTTP session makes.

A session id is what `POST /api/sessions` returned (`place.SESSION_ID`), so anything else is
refused before Redis or the database is asked. A session whose Redis was lost is found again
in the database's record and registered anew.
"""

from __future__ import annotations

import json
import time

from aiohttp import web

from adapters.http import place
from adapters.http.common import USER
from adapters.web.input import refusal
from adapters.web.services import Services
from bot.redis import keys


async def known(services: Services, session_id: str, owner: str) -> bool:
    """Whether `session_id` (without `http:`) is a session of this API; one found only in
    the database's record is registered again for `owner`."""
    if not place.SESSION_ID.fullmatch(session_id):
        return False
    if await services.redis.exists(keys.http_session(session_id)):
        return True
    if not await services.archive.exists(place.session_key(session_id)):
        return False
    record = {"owner": owner, "created_at": time.time(), "restored": True}
    await services.redis.set(keys.http_session(session_id), json.dumps(record), nx=True)
    return True


async def key_of(services: Services, request: web.Request) -> str:
    """The key of the session the request's path names, or a 404 for an id this API never
    made."""
    session_id = request.match_info["session_id"]
    if await known(services, session_id, request[USER]):
        return place.session_key(session_id)
    raise refusal(web.HTTPNotFound, "unknown session")
