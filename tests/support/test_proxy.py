"""The test proxy does what nginx does: the server sees 127.0.0.1 as its peer, the client's
address appended to `X-Forwarded-For`, the client's Host and body, and the answer streams
through as it is written."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx
from aiohttp import web

from tests.support.proxy import proxy
from tests.support.redis_server import free_port

DEADLINE = 30


@contextlib.asynccontextmanager
async def upstream(app: web.Application) -> AsyncIterator[str]:
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def echo(request: web.Request) -> web.Response:
    return web.json_response(
        {
            "peer": request.remote,
            "forwarded_for": request.headers.get("X-Forwarded-For"),
            "host": request.headers.get("Host"),
            "path": request.rel_url.raw_path_qs,
            "body": (await request.read()).decode(),
        },
        status=207,
        headers={"X-Upstream": "yes"},
    )


async def test_it_appends_the_client_to_x_forwarded_for_as_nginx_does() -> None:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", echo)
    async with upstream(app) as server, proxy(server) as through, httpx.AsyncClient() as http:
        plain = await http.post(f"{through}/a/b?c=d%20e", content=b"hello")
        spoofed = await http.get(f"{through}/x", headers={"X-Forwarded-For": "127.0.0.1"})
    assert plain.status_code == 207 and plain.headers["X-Upstream"] == "yes"
    assert plain.json() == {
        "peer": "127.0.0.1",
        "forwarded_for": "127.0.0.1",
        "host": through.removeprefix("http://"),
        "path": "/a/b?c=d%20e",
        "body": "hello",
    }
    assert spoofed.json()["forwarded_for"] == "127.0.0.1, 127.0.0.1"


async def test_it_streams_the_answer_as_the_server_writes_it() -> None:
    first_read = asyncio.Event()

    async def stream(request: web.Request) -> web.StreamResponse:
        answer = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await answer.prepare(request)
        await answer.write(b": first\n\n")
        await asyncio.wait_for(first_read.wait(), DEADLINE)  # only once the client has it
        await answer.write(b"data: second\n\n")
        return answer

    app = web.Application()
    app.router.add_get("/events", stream)
    async with (
        upstream(app) as server,
        proxy(server) as through,
        httpx.AsyncClient(timeout=DEADLINE) as http,
        http.stream("GET", f"{through}/events") as answer,
    ):
        chunks = answer.aiter_bytes()
        first = await anext(chunks)
        first_read.set()
        rest = b"".join([chunk async for chunk in chunks])
    assert answer.headers["Content-Type"] == "text/event-stream"
    assert first == b": first\n\n"
    assert rest == b"data: second\n\n"
