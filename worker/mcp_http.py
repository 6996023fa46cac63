"""`parley mcp --http`: the MCP server over streamable HTTP, behind PARLEY_API_TOKEN.

Anyone who can reach the port could otherwise run Parley's tools, so every request must
carry `Authorization: Bearer <PARLEY_API_TOKEN>`; without a token configured the server
does not start. The token is checked before the SDK sees the request: a refused request
opens no MCP session and runs nothing. Bodies are bounded by the SDK (413 past the limit).
The check is the one `parley web` makes (`adapters.web.callers`), and uvicorn is not let
rewrite the client's address from `X-Forwarded-For` (`proxy_headers` off).

The socket is bound here, before uvicorn starts, so that a port in use is one line naming
it, and port 0 (any free port) can be reported to whoever started us.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys
from collections.abc import Iterator

import uvicorn
from mcp.server.lowlevel import Server
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from adapters.web import callers
from bot.config.settings import ConfigError, Settings
from worker.signals import stop_on_signals

log = logging.getLogger(__name__)
PATH = "/mcp"
MAX_BODY = 1024 * 1024  # bytes: tool arguments are small
GRACE = 2  # seconds open streams get to finish when the server stops


class BearerGate:
    """Lets a request through only with the right bearer token: `adapters.web.callers`, the
    rule `parley web` applies with a token configured."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = callers.check_token(Headers(scope=scope), self._token)
            if refused is not None:
                body = {"error": f"{refused.reason} (Authorization: Bearer <token>)"}
                answer = JSONResponse(body, refused.status, headers=refused.headers)
                await answer(scope, receive, send)
                return
        await self.app(scope, receive, send)


def api_token(settings: Settings) -> str:
    """The token HTTP clients must send; raises ConfigError naming the variable if unset."""
    token = settings.api_token.get_secret_value() if settings.api_token else ""
    if not token:
        raise ConfigError("PARLEY_API_TOKEN: set it to serve MCP over HTTP (clients send it)")
    return token


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or ConfigError naming the address."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        problem = f"cannot listen on {host}:{port}: {exc.strerror}"
        raise ConfigError(f"PARLEY_HTTP_HOST/--port: {problem}") from None


class _Uvicorn(uvicorn.Server):
    """uvicorn that leaves the signals to Parley: its own handlers raise the signal again
    after shutting down, which would end the process by SIGTERM instead of exit code 0."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve_http(server: Server, settings: Settings, token: str, port: int) -> None:
    """Serve `server` on PARLEY_HTTP_HOST:port, to clients that send `token`, until
    SIGTERM or SIGINT."""
    sock = listen(settings.http_host, port)
    app = server.streamable_http_app(
        streamable_http_path=PATH, host=settings.http_host, max_request_body_size=MAX_BODY
    )
    config = uvicorn.Config(
        BearerGate(app, token),
        log_config=None,
        lifespan="on",
        timeout_graceful_shutdown=GRACE,
        server_header=False,
        proxy_headers=False,  # the peer is the socket's: no header may rewrite it
    )
    web = _Uvicorn(config)
    stopping = stop_on_signals()
    host, bound = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"parley: serving MCP at http://{shown}:{bound}{PATH}", file=sys.stderr, flush=True)
    serving = asyncio.create_task(web.serve(sockets=[sock]))
    stop = asyncio.create_task(stopping.wait())
    try:
        await asyncio.wait({serving, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        web.should_exit = True
        stop.cancel()
        await serving
        sock.close()
