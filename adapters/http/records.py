"""The record of every platform's sessions, for operators: list, read, delete, stats.

Ids are session keys (`tg:123`, `slack:T1:C1:1700000000.1`, `http:…`); a bare HTTP session id
(what POST /api/sessions returned) is accepted too. Deleting a session is complete: its hot
state in Redis, its workspace's files (so `parley web` needs PARLEY_WORKSPACE_DIR on the
storage the workers write it on) and its record in SQL all go, the record last: a deletion
that failed halfway still finds the session when asked again.
"""

from __future__ import annotations

import asyncio
import logging
import re

from aiohttp import web

from adapters.http import place
from adapters.http.session_settings import shown
from adapters.web.input import error, query_number
from adapters.web.services import Services
from bot.mailbox.inbox import Mailbox
from bot.redis import keys
from bot.tools.workspace_upkeep import remove_workspace

log = logging.getLogger(__name__)
STORED = re.compile(rb'"(?:sha256|extract)":\s*"([0-9a-f]{64})"')  # in a file reference's JSON
PEEK = 1_000  # of a session's inbox, the messages looked at for files
MAX_LIMIT = 100
STOP_WAIT_S = 10.0


def _key(request: web.Request) -> str:
    session = request.match_info["session_id"]
    return session if ":" in session else place.session_key(session)


class Records:
    def __init__(self, services: Services) -> None:
        self.services = services

    async def page(self, request: web.Request) -> web.Response:
        """`?offset=&limit=`: the most recently active sessions first, with the total."""
        offset = query_number(request, "offset", 0, 0, 10**9)
        limit = query_number(request, "limit", 20, 1, MAX_LIMIT)
        total, items = await self.services.archive.sessions(offset, limit)
        return web.json_response(
            {
                "total": total,
                "offset": offset,
                "limit": limit,
                "items": [item.model_dump(mode="json") for item in items],
            }
        )

    async def detail(self, request: web.Request) -> web.Response:
        """The session and its latest messages (`?recent=`, 50 unless asked), and how its
        turns run (`session_settings.shown`)."""
        key = _key(request)
        recent = query_number(request, "recent", 50, 0, 1000)
        found = await self.services.archive.session(key, recent)
        if found is None:
            return error(404, "unknown session", id=key)
        body = found.model_dump(mode="json")
        body["running"] = await self.services.mailbox.busy(key)
        body |= await shown(self.services, key, found.chat_kind, found.model)
        return web.json_response(body)

    async def delete(self, request: web.Request) -> web.Response:
        """Stop a running turn, then forget the session everywhere."""
        key = _key(request)
        mailbox = self.services.mailbox
        known = await self.services.archive.exists(key) or await mailbox.load_state(key) is not None
        if not known:
            return error(404, "unknown session", id=key)
        if await mailbox.stop(key) and not await self._stopped(key):
            return error(409, "a turn is still running in this session; try again", id=key)
        unrecorded = await _files_waiting(mailbox, key)
        removed = await mailbox.forget(key)
        if place.is_ours(key):
            removed += await self.services.redis.delete(keys.http_session(place.session_id(key)))
        base = self.services.settings.workspace_dir
        try:
            files = await asyncio.to_thread(remove_workspace, base, key)
        except OSError as exc:
            log.warning("could not remove the workspace of %s: %s", key, exc)
            return error(500, "could not remove the session's files; try again", id=key)
        deleted = await self.services.archive.delete(key, unrecorded)
        store = self.services.files.store
        sent = await asyncio.to_thread(store.remove, deleted.unused_files)
        answer = {"deleted": key, "redis_keys": removed, "workspace": files, "files": sent}
        return web.json_response(answer)

    async def _stopped(self, key: str) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STOP_WAIT_S
        while await self.services.mailbox.busy(key):
            if loop.time() > deadline:
                return False
            await asyncio.sleep(0.1)
        return True

    async def stats(self, request: web.Request) -> web.Response:
        stats = await self.services.archive.stats()
        return web.json_response(stats.model_dump(mode="json"))


async def _files_waiting(mailbox: Mailbox, key: str) -> set[str]:
    """The files of the session that only Redis knows of: in the state of a turn not recorded
    yet, and in the messages still in its inbox (found by their references' JSON)."""
    stored = await mailbox.load_state(key)
    waiting = await mailbox.peek(key, PEEK)
    parts = [*(stored.context if stored else []), stored.head if stored else b""]
    parts += [envelope.model_dump_json().encode() for envelope in waiting]
    return {found.group(1).decode() for part in parts for found in STORED.finditer(part)}
