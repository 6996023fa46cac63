"""Local stand-ins for the search APIs web_search talks to: SearXNG, Brave and Tavily.

Each speaks its service's JSON, on its path, and is as strict as the service about what a
request must carry: the key in the right header, the query parameters it needs. A request
it would refuse gets the service's error status; `fail` scripts statuses to answer first
(a 503 twice, say), and every request is recorded so a test can count them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

from aiohttp import web

Kind = Literal["searxng", "brave", "tavily"]
KEY = "sk-search-5ecret-key-do-not-print"
HITS = [
    ("Tidal power - Wikipedia", "https://en.wikipedia.org/wiki/Tidal_power", "Tidal power or"),
    ("Bay of Fundy tides", "https://fundy.example/tides", "The highest tides in the world"),
    ("Turbines at Parrsboro", "https://energy.example/parrsboro", "Turbines on the sea floor"),
    ("Tidal stream generators", "https://science.example/tsg", "A tidal stream generator"),
    ("Ocean energy", "https://ocean.example/energy", "Energy from waves and tides"),
    ("Tidal lagoons", "https://lagoon.example/", "A lagoon holds the tide"),
    ("Fundy facts", "https://facts.example/fundy", "One hundred billion tonnes"),
]


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any = None


@dataclass
class FakeSearch:
    kind: Kind
    key: str = KEY
    requests: list[Seen] = field(default_factory=list)
    fail: deque[int] = field(default_factory=deque)
    base_url: str = ""
    _runner: web.AppRunner | None = None

    async def __aenter__(self) -> FakeSearch:
        app = web.Application()
        app.router.add_get("/search", self._searxng)
        app.router.add_get("/res/v1/web/search", self._brave)
        app.router.add_post("/search", self._tavily)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.base_url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def _record(self, request: web.Request, kind: Kind) -> web.Response | None:
        """Record the request; an answer if it is refused, None to go on."""
        body = await request.json() if request.method == "POST" else None
        self.requests.append(
            Seen(request.method, request.path, dict(request.query), dict(request.headers), body)
        )
        if kind != self.kind:
            return web.json_response({"error": "not this service"}, status=404)
        if self.fail:
            return web.json_response({"error": "scripted failure"}, status=self.fail.popleft())
        return None

    async def _searxng(self, request: web.Request) -> web.Response:
        if (refused := await self._record(request, "searxng")) is not None:
            return refused
        if request.query.get("format") != "json" or not request.query.get("q"):
            return web.Response(status=403, text="Forbidden")  # SearXNG with JSON off
        results = [
            {"url": url, "title": title, "content": snippet, "engine": "duckduckgo"}
            for title, url, snippet in HITS
        ]
        return web.json_response(
            {"query": request.query["q"], "number_of_results": 0, "results": results}
        )

    async def _brave(self, request: web.Request) -> web.Response:
        if (refused := await self._record(request, "brave")) is not None:
            return refused
        if request.headers.get("X-Subscription-Token") != self.key:
            error = {"code": "SUBSCRIPTION_TOKEN_INVALID", "status": 401, "detail": "invalid"}
            return web.json_response({"type": "ErrorResponse", "error": error}, status=401)
        count = int(request.query.get("count", "20"))
        if not request.query.get("q") or not 1 <= count <= 20:
            return web.json_response({"type": "ErrorResponse"}, status=422)
        results = [
            {
                "type": "search_result",
                "title": title,
                "url": url,
                "description": f"<strong>{snippet}</strong> &amp; more",
            }
            for title, url, snippet in HITS[:count]
        ]
        return web.json_response(
            {
                "type": "search",
                "query": {"original": request.query["q"]},
                "web": {"type": "search", "results": results},
            }
        )

    async def _tavily(self, request: web.Request) -> web.Response:
        if (refused := await self._record(request, "tavily")) is not None:
            return refused
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return web.json_response(
                {"detail": {"error": "Unauthorized: missing or invalid API key."}}, status=401
            )
        body = self.requests[-1].body
        if not isinstance(body, dict) or not body.get("query"):
            return web.json_response({"detail": {"error": "query is required"}}, status=400)
        results = [
            {"title": title, "url": url, "content": snippet, "score": 0.9}
            for title, url, snippet in HITS[: int(body.get("max_results", 5))]
        ]
        return web.json_response({"query": body["query"], "results": results, "response_time": 0.5})
