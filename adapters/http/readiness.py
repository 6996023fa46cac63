"""`/readyz`: whether this web process can serve now; `/healthz` only says it is alive.

Ready means Redis answers, the database answers with its schema at the revision this code
needs (`bot.store.revision.HEAD`; a database left behind by a rollback is not ready; one a
newer version migrated forward is, since migrations only add and this process serves on until
an upgrade replaces it; see docs/OPERATIONS.md, "Upgrades"), its file is in place
(`bot.store.sqlite_file`), the shared directories (files, workspaces) are the ones the other
processes use (`bot.files.shared_dirs`), and every configured platform has accepted its
credentials since start (`adapters.web.startup.CONNECTED`: the answer the process already got,
so no probe ever calls Telegram or Slack). The checks run at once, each bounded by
CHECK_TIMEOUT_S, so a probe answers within about that however much is down. The answer names
each failed check with a short reason and nothing else: no URL, no token, no exception text
that could carry one (a directory's path is no secret).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from redis.exceptions import RedisError

from adapters.web.services import Services
from adapters.web.startup import CONNECTED
from bot.files import shared_dirs
from bot.store import revision

log = logging.getLogger(__name__)
CHECK_TIMEOUT_S = 2.0
PATH = "/readyz"
Check = Callable[[], Awaitable[str | None]]


class Readiness:
    def __init__(self, services: Services, app: web.Application) -> None:
        self.services = services
        self.app = app

    async def redis(self) -> str | None:
        await self.services.redis.ping()
        return None

    async def database(self) -> str | None:
        if (problem := self.services.archive.problem()) is not None:
            return problem  # names the missing file, which is no secret
        at = await revision.read(self.services.archive.engine)
        if at != revision.HEAD and not (at is not None and revision.newer(at)):
            shown = at or "empty"
            return f"the schema is at {shown}, not {revision.HEAD}: run `parley migrate`"
        return None

    async def storage(self) -> str | None:
        """The shared directories are the ones the other processes use (`bot.files.shared_dirs`)."""
        try:
            return await shared_dirs.check(self.services.redis, self.services.settings)
        except (RedisError, OSError):
            return None  # Redis away: the `redis` check says so, once

    def platforms(self) -> dict[str, str | None]:
        """Each configured platform's state as the process last learnt it."""
        known = self.app.get(CONNECTED, {})
        waiting = "its credentials have not been accepted yet"
        return {name: None if up else waiting for name, up in known.items()}

    async def answer(self, _: web.Request) -> web.Response:
        checks: dict[str, Check] = {
            "redis": self.redis,
            "database": self.database,
            "storage": self.storage,
        }
        found = await asyncio.gather(*(_bounded(name, check) for name, check in checks.items()))
        results = dict(zip(checks, found, strict=True)) | self.platforms()
        failed = {name: why for name, why in results.items() if why is not None}
        status = {name: failed.get(name, "ok") for name in results}
        if failed:
            body = {"error": f"not ready: {', '.join(failed)}", "failed": failed, "checks": status}
            return web.json_response(body, status=503)
        return web.json_response({"status": "ready", "checks": status})


async def _bounded(name: str, check: Check) -> str | None:
    """The check's problem, or a generic one if it raised or took too long (the exception's
    type only: its text may hold a URL with a password)."""
    try:
        return await asyncio.wait_for(check(), CHECK_TIMEOUT_S)
    except TimeoutError:
        return f"no answer within {CHECK_TIMEOUT_S:.0f} s"
    except Exception as exc:
        log.info("readiness check %s failed (%s)", name, type(exc).__name__)
        return f"unreachable ({type(exc).__name__})"


def mount(app: web.Application, services: Services, public: set[str]) -> None:
    """Serve /readyz, public like /healthz (a probe carries no token)."""
    app.router.add_get(PATH, Readiness(services, app).answer)
    public.add(PATH)
