"""Serving the web app so that even a request aiohttp cannot parse gets a JSON answer.

A request line or header past aiohttp's limits, or bytes that are not HTTP, are refused by
its parser before any middleware runs: aiohttp answers a text/plain 400 and logs the
parser's traceback at ERROR, so anyone could fill the log. aiohttp has no public hook for
that answer (aio-libs/aiohttp#3287), so the one connection method that makes it is
overridden here: the client gets a JSON 414, 431 or 400 and the log one WARNING line.

The URL limit differs from the header limit by design: a `LineTooLong` names the limit it
hit, which is how a long URL (414) is told from a long header (431).

`Runner.stop` is how `parley web` ends: aiohttp's own graceful stop (no new connections, the
`on_shutdown` handlers, the requests in flight answered, then `on_cleanup`), but with one
deadline for all of it (`adapters.web.shutdown`) rather than aiohttp's 60 s for the requests
alone, which is longer than Docker or Kubernetes wait before they kill.
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMethod, HttpProcessingError, LineTooLong
from aiohttp.web_request import BaseRequest

from adapters.web.input import error
from adapters.web.shutdown import DEADLINE

log = logging.getLogger(__name__)
MAX_URL = 8 * 1024  # the request line: method, URL and version
MAX_HEADER = 8190  # aiohttp's default for one header line
LIMITS: dict[str, Any] = {"max_line_size": MAX_URL, "max_field_size": MAX_HEADER}


def _answer(exc: HttpProcessingError) -> tuple[int, str]:
    if isinstance(exc, LineTooLong) and exc.args[1:2] == (MAX_URL,):
        return 414, f"the URL is longer than {MAX_URL} bytes"
    if isinstance(exc, LineTooLong):
        return 431, f"a header is longer than {MAX_HEADER} bytes"
    return 400, "the request is not valid HTTP"


class _Connection(web.RequestHandler):
    """One client connection; only how it answers an unparsable request is changed."""

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if not isinstance(exc, HttpProcessingError):
            return super().handle_error(request, status, exc, message)
        code, text = _answer(exc)
        if isinstance(exc, BadHttpMethod):  # TLS or a port scan: not even an HTTP client
            log.debug("refused %s from %s", code, request.remote)
        else:
            log.warning("refused %s from %s: %s", code, request.remote, text)
        answer = error(code, text)
        answer.force_close()
        return answer


class _Server(web.Server):
    def __call__(self) -> web.RequestHandler:
        return _Connection(self, loop=self._loop, **self._kwargs)


class Runner(web.AppRunner):
    """`web.AppRunner` whose connections answer an unparsable request with JSON, and that
    stops within a deadline (see the module docstring)."""

    async def stop(self, grace: float) -> None:
        """Stop serving within `grace` seconds: what `cleanup` does, on the app's deadline."""
        deadline = self.app.get(DEADLINE)
        if deadline is not None:
            deadline.start(grace)
        for site in list(self.sites):
            await site.stop()
        log.info("stopped listening; finishing what was taken within %g s", grace)
        await self.cleanup()

    async def shutdown(self) -> None:
        """The app's `on_shutdown` handlers; then the requests in flight get what is left."""
        await super().shutdown()
        deadline = self.app.get(DEADLINE)
        if deadline is not None and deadline.started:
            # aiohttp's wait for the requests in flight, read right after this returns;
            # never 0, which aiohttp takes as no limit at all
            self._shutdown_timeout = max(deadline.left(), 0.01)
            log.info("answering the requests in flight within %.1f s", self._shutdown_timeout)

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _Server  # the same server; only the connections it makes differ
        return server
