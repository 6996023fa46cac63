"""A reverse proxy for the tests of who may reach Parley: what nginx does with

    location / {
        proxy_pass http://127.0.0.1:PORT;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_buffering off;
    }

It runs on this machine, so every request it passes on comes from 127.0.0.1; it appends the
address of its own client to whatever `X-Forwarded-For` that client sent (so a client that
sends `X-Forwarded-For: 127.0.0.1` reaches the server with `127.0.0.1, 127.0.0.1`); and it
streams the answer through as it comes, so event streams pass as they would.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web

from tests.support.redis_server import free_port

# Hop-by-hop headers (RFC 9110, 7.6.1), and the ones the proxy sets itself.
NOT_PASSED = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
     "upgrade", "content-length", "x-forwarded-for"}
)  # fmt: skip


def forwarded_for(sent: str | None, client: str) -> str:
    """`$proxy_add_x_forwarded_for`: what the client sent, then its address."""
    return f"{sent}, {client}" if sent else client


class Proxy:
    """Serves on 127.0.0.1 and passes every request on to `upstream` (`http://host:port`)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self._client: aiohttp.ClientSession | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        assert self._client is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in NOT_PASSED}
        client = request.remote or ""
        headers["X-Forwarded-For"] = forwarded_for(request.headers.get("X-Forwarded-For"), client)
        async with self._client.request(
            request.method,
            self.upstream + request.rel_url.raw_path_qs,
            headers=headers,
            data=await request.read() if request.body_exists else None,
            allow_redirects=False,
        ) as answer:
            passed = {k: v for k, v in answer.headers.items() if k.lower() not in NOT_PASSED}
            out = web.StreamResponse(status=answer.status, reason=answer.reason, headers=passed)
            await out.prepare(request)
            with contextlib.suppress(ConnectionResetError):  # the client left: so does this
                async for chunk in answer.content.iter_any():
                    await out.write(chunk)
                await out.write_eof()
            return out


@contextlib.asynccontextmanager
async def proxy(upstream: str) -> AsyncIterator[str]:
    """A `Proxy` to `upstream` while the block runs; its own base URL."""
    through = Proxy(upstream)
    app = web.Application(client_max_size=16 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", through.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=30)
    async with aiohttp.ClientSession(auto_decompress=False, timeout=timeout) as client:
        through._client = client
        try:
            await web.TCPSite(runner, "127.0.0.1", port).start()
            yield f"http://127.0.0.1:{port}"
        finally:
            await runner.cleanup()
