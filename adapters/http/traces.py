"""Runs' traces and numbers for operators (and the dashboard that draws them):
`GET /api/traces/{run_id}`, `GET /api/traces/{run_id}/graph` and `GET /api/metrics/runs`.

A run id is the 32 hex characters the record gives it; the window's bounds are ISO 8601
times in ASCII (a time without a zone is UTC). Anything else is a 400 or a 404 that says
which.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from aiohttp import web

from adapters.http.common import error, query_number, refusal
from adapters.services import Services
from bot.trace.graph import layout

RUN_ID = re.compile(r"[0-9a-f]{32}")
WHEN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9:.]{5,15})?(Z|[+-][0-9]{2}:?[0-9]{2})?")
MAX_LIMIT = 200
DEFAULT_WINDOW = timedelta(days=1)


def _when(request: web.Request, name: str, default: datetime) -> datetime:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        if not WHEN.fullmatch(raw):
            raise ValueError
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise refusal(
            web.HTTPBadRequest, f"{name} must be an ISO 8601 time, e.g. 2026-11-24T09:00:00Z"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class TraceRoutes:
    def __init__(self, services: Services) -> None:
        self.traces = services.traces

    async def _found(self, request: web.Request) -> tuple[dict[str, object], dict[str, object]]:
        run_id = request.match_info["run_id"]
        if not RUN_ID.fullmatch(run_id):
            raise refusal(web.HTTPBadRequest, "a run id is 32 hexadecimal characters")
        found = await self.traces.of_run(run_id)
        if found is None or found[1] is None:
            what = "unknown run" if found is None else "this run has no trace"
            raise refusal(web.HTTPNotFound, what, id=run_id)
        run, trace = found
        assert trace is not None
        return run, trace

    async def trace(self, request: web.Request) -> web.Response:
        """The run, its numbers, and every node and edge."""
        run, trace = await self._found(request)
        return web.json_response({"run": run, **trace})

    async def graph(self, request: web.Request) -> web.Response:
        """The trace laid out: each node with its x and y, and the typed edges."""
        run, trace = await self._found(request)
        return web.json_response({"run": run, **layout(trace)})

    async def runs(self, request: web.Request) -> web.Response:
        """`?start=&end=` (the last day unless given), `?offset=&limit=`: the runs that
        started then, newest first, and their aggregates."""
        end = _when(request, "end", datetime.now(UTC))
        start = _when(request, "start", end - DEFAULT_WINDOW)
        if start >= end:
            return error(400, "start must be before end")
        offset = query_number(request, "offset", 0, 0, 10**9)
        limit = query_number(request, "limit", 50, 1, MAX_LIMIT)
        window = await self.traces.window(start, end, offset, limit)
        return web.json_response(
            {
                "start": start.isoformat(),
                "end": end.isoformat(),
                "total": window.total,
                "success_rate": window.success_rate,
                "average_latency_ms": window.average_latency_ms,
                "average_reliability": window.average_reliability,
                "offset": offset,
                "limit": limit,
                "items": window.runs,
            }
        )


def mount(app: web.Application, services: Services) -> None:
    routes = TraceRoutes(services)
    app.router.add_get("/api/traces/{run_id}", routes.trace)
    app.router.add_get("/api/traces/{run_id}/graph", routes.graph)
    app.router.add_get("/api/metrics/runs", routes.runs)
