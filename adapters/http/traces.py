"""Runs' traces and numbers for operators (and the dashboard that draws them):
`GET /api/traces/{run_id}`, `GET /api/traces/{run_id}/graph`, `GET /api/metrics/runs`,
`GET /api/metrics/series` (the charts' numbers), `GET /api/metrics/groups` (the runs side by
side by model, mode, prompt or tool set) and `GET /api/metrics/facets` (the values to filter
by).

A run id is the 32 hex characters the record gives it; the window and the filters are read
by `run_query` (a time without a zone is UTC). Anything else is a 400 or a 404 that says
which.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from aiohttp import web

from adapters.http.run_query import (
    RUN_ID,
    RunQuery,
    bad,
    choice,
    only,
    run_query,
    spanned,
    window,
)
from adapters.web.input import query_number, refusal
from adapters.web.services import Services
from bot.redis.live_runs import LiveRuns
from bot.store.run_groups import GROUPINGS, MAX_GROUPS, Groups, RunGroups
from bot.store.sealing import Unsealable
from bot.store.series import LATENCY_BINS_MS, RunSeries, Series
from bot.trace.graph import layout

MAX_LIMIT = 200
# The slices a series may be cut in; `auto` takes the smallest that makes at most AUTO_SLICES.
BUCKETS = {"1m": 60, "5m": 300, "15m": 900, "1h": 3600, "6h": 21600, "1d": 86400, "7d": 604800}
AUTO_SLICES = 60
MAX_SLICES = 1000


def bucket_size(request: web.Request, start: datetime, end: datetime) -> tuple[str, int]:
    """`?bucket=` (auto unless given) as its name and seconds; a size that would cut the
    window in more than MAX_SLICES slices is refused."""
    name = request.query.get("bucket", "auto")
    span = (end - start).total_seconds()
    if name == "auto":
        fitting = [(n, s) for n, s in BUCKETS.items() if span / s <= AUTO_SLICES]
        name = fitting[0][0] if fitting else max(BUCKETS, key=BUCKETS.__getitem__)
    elif name not in BUCKETS:
        raise bad(f"bucket must be auto or one of {', '.join(BUCKETS)}")
    if span / BUCKETS[name] > MAX_SLICES:
        raise bad(
            f"bucket {name} cuts this window in more than {MAX_SLICES} slices; take a longer one"
        )
    return name, BUCKETS[name]


def series_json(series: Series) -> dict[str, Any]:
    bounds: list[int | None] = [*LATENCY_BINS_MS, None]
    return {
        "buckets": [
            {
                "start": s.start.isoformat(),
                "runs": s.runs,
                "ended": s.ended,
                "succeeded": s.succeeded,
                "success_rate": s.success_rate,
                "average_latency_ms": s.average_latency_ms,
                "average_reliability": s.average_reliability,
            }
            for s in series.slices
        ],
        "latency": [
            {"below_ms": bound, "runs": runs}
            for bound, runs in zip(bounds, series.latency, strict=True)
        ],
        "tools": [{"name": name, "calls": calls} for name, calls in series.tools],
        "errors": [
            {"finish_reason": reason, "error": message, "runs": runs}
            for reason, message, runs in series.errors
        ],
    }


def groups_json(found: Groups) -> dict[str, Any]:
    return {
        "by": found.by,
        "total": found.total,
        "groups": [
            {
                "key": g.key,
                "runs": g.runs,
                "ended": g.ended,
                "succeeded": g.succeeded,
                "success_rate": g.success_rate,
                "average_latency_ms": g.average_latency_ms,
                "average_reliability": g.average_reliability,
                "tokens": {"input": g.input_tokens, "output": g.output_tokens},
                "cost_usd": g.cost_usd,
            }
            for g in found.groups
        ],
    }


def window_json(query: RunQuery) -> dict[str, str]:
    return {"start": query.start.isoformat(), "end": query.end.isoformat()}


class TraceRoutes:
    def __init__(self, services: Services) -> None:
        self.traces = services.traces
        self.live = LiveRuns(services.redis, services.settings.turn_timeout)
        self.series_of = RunSeries(services.traces.engine)
        self.groups_of = RunGroups(services.traces.engine)

    async def _found(self, request: web.Request) -> dict[str, Any]:
        """The run as recorded, or as it stands while it is queued or runs (its record not
        written yet: `bot.redis.live_runs`), with its trace's nodes, edges and numbers."""
        run_id = request.match_info["run_id"]
        if not RUN_ID.fullmatch(run_id):
            raise refusal(web.HTTPBadRequest, "a run id is 32 hexadecimal characters")
        try:
            found = await self.traces.of_run(run_id)
        except Unsealable as exc:
            raise refusal(
                web.HTTPConflict, f"this run's trace is sealed: {exc}", id=run_id
            ) from None
        if found is None and (going := await self.live.of(run_id)) is not None:
            return going
        if found is None or found.trace is None:
            what = "unknown run" if found is None else "this run has no trace"
            raise refusal(web.HTTPNotFound, what, id=run_id)
        return {"run": found.run, "config": found.config, **found.trace}

    async def trace(self, request: web.Request) -> web.Response:
        """The run, what it ran with (null for a run recorded before that was kept, or one
        still running), its numbers, and every node and edge."""
        return web.json_response(await self._found(request))

    async def graph(self, request: web.Request) -> web.Response:
        """The trace laid out: each node with its x and y, the typed edges, the run's numbers
        and what it ran with, all a run's panel needs in one answer."""
        found = await self._found(request)
        shown = {key: found.get(key) for key in ("run", "config", "metrics")}
        return web.json_response({**shown, **layout(found)})

    async def runs(self, request: web.Request) -> web.Response:
        """The runs that started in the window and match the filters, newest first
        (`?offset=&limit=`), and their aggregates."""
        query = run_query(request, more=("offset", "limit"))
        offset = query_number(request, "offset", 0, 0, 10**9)
        limit = query_number(request, "limit", 50, 1, MAX_LIMIT)
        query = await spanned(query, self.traces)
        found = await self.traces.window(query.start, query.end, offset, limit, query.match)
        return web.json_response(
            {
                **window_json(query),
                "total": found.total,
                "ended": found.ended,
                "succeeded": found.succeeded,
                "success_rate": found.success_rate,
                "average_latency_ms": found.average_latency_ms,
                "average_reliability": found.average_reliability,
                "average_iterations": found.average_iterations,
                "max_iterations": found.max_iterations,
                "average_states_ms": found.average_states_ms,
                "offset": offset,
                "limit": limit,
                "items": found.runs,
            }
        )

    async def series(self, request: web.Request) -> web.Response:
        """The matching runs per slice of time (`?bucket=`), their latencies as a histogram,
        the tools they called and how the troubled ones ended."""
        query = await spanned(run_query(request, more=("bucket",)), self.traces)
        name, seconds = bucket_size(request, query.start, query.end)
        series = await self.series_of.series(query.start, query.end, seconds, query.match)
        return web.json_response(
            {**window_json(query), "bucket": name, "bucket_s": seconds, **series_json(series)}
        )

    async def groups(self, request: web.Request) -> web.Response:
        """The matching runs grouped by `?by=` (model unless given: mode, prompt or tools),
        the groups with most runs first (`?limit=`), and how many groups there are."""
        query = run_query(request, more=("by", "limit"))
        by = choice(request, "by", GROUPINGS) or "model"
        limit = query_number(request, "limit", 50, 1, MAX_GROUPS)
        query = await spanned(query, self.traces)
        found = await self.groups_of.groups(query.start, query.end, by, query.match, limit)
        return web.json_response({**window_json(query), "limit": limit, **groups_json(found)})

    async def facets(self, request: web.Request) -> web.Response:
        """The platforms, models, triggers, statuses, modes, prompts and tool sets the
        window's runs have."""
        only(request, ("start", "end"))
        start, end = window(request)
        found = await self.traces.facets(start, end)
        return web.json_response(
            {
                "start": start.isoformat(),
                "end": end.isoformat(),
                "platforms": found.platforms,
                "models": found.models,
                "triggers": found.triggers,
                "statuses": found.statuses,
                "modes": found.modes,
                "prompts": found.prompts,
                "tools": found.tool_sets,
            }
        )


def mount(app: web.Application, services: Services) -> None:
    routes = TraceRoutes(services)
    app.router.add_get("/api/traces/{run_id}", routes.trace)
    app.router.add_get("/api/traces/{run_id}/graph", routes.graph)
    app.router.add_get("/api/metrics/runs", routes.runs)
    app.router.add_get("/api/metrics/series", routes.series)
    app.router.add_get("/api/metrics/groups", routes.groups)
    app.router.add_get("/api/metrics/facets", routes.facets)
