"""Local servers for the fetch tests: a page server, and a trap that records every connection.

The trap listens where the guard must never let a fetch go (127.0.0.1, ::1, 127.0.0.2). It
records a connection as soon as it is accepted, before any HTTP is spoken, so a test that
asserts it saw nothing proves no connection was made at all.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from types import TracebackType

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

ARTICLE = """<!DOCTYPE html>
<html lang="en"><head><title>Tidal power in the Bay of Fundy | Coastline Weekly</title>
<meta charset="utf-8"></head>
<body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/news">News</a></li>
<li><a href="/subscribe">Subscribe now and save 50%</a></li></ul></nav>
<div class="ad-banner">BUY CHEAP WIDGETS TODAY - LIMITED OFFER</div>
<main><article>
<h1>Tidal power in the Bay of Fundy</h1>
<p>The Bay of Fundy has the highest tides in the world: twice a day, some one hundred
billion tonnes of seawater flow in and out of the bay, more than the flow of all the
world's rivers combined.</p>
<p>Engineers have tried for decades to turn that flow into electricity. The turbines
placed on the sea floor near Parrsboro had to withstand currents of up to five metres per
second, and several early designs were torn apart within weeks.</p>
<p>A newer generation of turbines, moored to floating platforms, can be towed to shore for
repairs, which the project's engineers say makes the economics of tidal power work at
last.</p>
</article></main>
<aside class="sidebar"><h3>Sponsored</h3><p>Win a cruise! Click here.</p></aside>
<footer><p>Copyright 2024 Coastline Weekly. All rights reserved. Privacy policy.</p></footer>
</body></html>"""


class Trap:
    """A TCP server that records who connected, and answers with a secret."""

    def __init__(self, host: str, port: int = 0) -> None:
        self.host, self.port = host, port
        self.hits: list[str] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Trap:
        self._server = await asyncio.start_server(self._connected, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.hits.append(str(writer.get_extra_info("peername")))
        body = b"INTERNAL SECRET"
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()


def ipv6_loopback() -> bool:
    """Whether this machine can listen on ::1 (some containers have no IPv6)."""
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


class PageServer:
    """An HTTP server with the pages the tests fetch; counts requests per path."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port = host, port
        self.counts: dict[str, int] = {}
        self.flaky_failures = 2
        self.redirect_to = ""  # where /away redirects
        self._release = asyncio.Event()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def __aenter__(self) -> PageServer:
        app = web.Application()
        app.middlewares.append(self._count)
        app.router.add_get("/article", self._html(ARTICLE))
        app.router.add_get("/bare", self._html("<html><body><ul><li>one</li><li>two</li></ul>"))
        app.router.add_get("/text", self._body(b"plain words\nsecond line", "text/plain"))
        app.router.add_get("/json", self._body(b'{"answer": 42}', "application/json"))
        app.router.add_get("/image", self._body(b"\x89PNG\r\n\x1a\n" + b"\0" * 64, "image/png"))
        app.router.add_get("/pdf", self._body(b"%PDF-1.7\n", "application/pdf"))
        app.router.add_get("/huge", self._huge)
        app.router.add_get("/slow", self._slow)
        app.router.add_get("/away", self._away)
        app.router.add_get("/loop/{name}", self._loop)
        app.router.add_get("/chain/{n}", self._chain)
        app.router.add_get("/status/{code}", self._status)
        app.router.add_get("/flaky", self._flaky)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._release.set()
        assert self._runner is not None
        await self._runner.cleanup()

    @web.middleware
    async def _count(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        self.counts[request.path] = self.counts.get(request.path, 0) + 1
        return await handler(request)

    @staticmethod
    def _html(page: str) -> Handler:
        async def handler(request: web.Request) -> web.Response:
            return web.Response(text=page, content_type="text/html", charset="utf-8")

        return handler

    @staticmethod
    def _body(body: bytes, content_type: str) -> Handler:
        async def handler(request: web.Request) -> web.Response:
            return web.Response(body=body, content_type=content_type)

        return handler

    async def _huge(self, request: web.Request) -> web.StreamResponse:
        """Ten megabytes of text, streamed, unless the client hangs up first."""
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        line = b"all work and no play makes a long page\n" * 1000
        try:
            for _ in range(10_000_000 // len(line)):
                await response.write(line)
        except ConnectionError:  # the fetch stopped reading, as it should
            self.counts["huge: hung up"] = 1
        return response

    async def _slow(self, request: web.Request) -> web.StreamResponse:
        """Headers at once, then nothing until the test ends."""
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        await response.write(b"the start")
        await self._release.wait()
        return response

    async def _away(self, request: web.Request) -> web.Response:
        raise web.HTTPFound(self.redirect_to)

    async def _loop(self, request: web.Request) -> web.Response:
        other = "b" if request.match_info["name"] == "a" else "a"
        raise web.HTTPFound(f"/loop/{other}")

    async def _chain(self, request: web.Request) -> web.Response:
        n = int(request.match_info["n"])
        if n == 0:
            return web.Response(text="end of the chain")
        raise web.HTTPMovedPermanently(f"/chain/{n - 1}")

    async def _status(self, request: web.Request) -> web.Response:
        return web.Response(status=int(request.match_info["code"]), text="status page")

    async def _flaky(self, request: web.Request) -> web.Response:
        if self.flaky_failures > 0:
            self.flaky_failures -= 1
            return web.Response(status=503, text="busy")
        return web.Response(text="steady now")
