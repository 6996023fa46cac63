"""Connections that go only to the address the guard checked.

httpx hands the host name to httpcore's network backend, which would resolve it again when
it connects. Between the guard's look-up and that one, a hostile DNS server can change its
answer from a public address to 127.0.0.1 (DNS rebinding). So the backend here is the one
place a name is resolved: it asks the guard, which resolves and checks every address, and
connects to the checked address itself. TLS is still started by httpcore with the URL's host
name, so SNI and the certificate check are for the name, and the Host header is the URL's.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Iterable

import httpcore
import httpx

from bot.tools.web.guard import Guard, Refused

SocketOption = (
    tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]
)


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """A network backend that resolves through the guard and connects to what it checked.
    `network` does the connecting (httpcore's own by default; tests wrap it)."""

    def __init__(self, guard: Guard, network: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.guard = guard
        self.network = network or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's signature)
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        address = await self.guard.resolve(host, port)
        return await self.network.connect_tcp(
            str(address), port, timeout, local_address, socket_options
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's signature)
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise Refused("Refused: web_fetch does not open local sockets.")

    async def sleep(self, seconds: float) -> None:
        await self.network.sleep(seconds)


@functools.cache
def pages_context(*, trust_env: bool = False) -> ssl.SSLContext:
    """The web tools' TLS context, made once: each one made reads certifi's bundle (about
    20 ms of CPU), and every fetch and search would make its own (see `bot.tls`). A fetch
    ignores the environment's certificate settings with its proxies; a search reads them."""
    return httpx.create_ssl_context(trust_env=trust_env)


class PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's transport on a connection pool that uses `PinnedBackend`. Proxies from the
    environment are ignored: a proxy would make the connection, and the guard's check of
    the address would mean nothing."""

    def __init__(self, backend: PinnedBackend, ssl_context: ssl.SSLContext | None = None) -> None:
        context = ssl_context or pages_context()
        super().__init__(verify=context, trust_env=False)
        # httpx offers no parameter for the backend; its pool is replaced by an equal one
        # that has it (the same settings httpx's defaults give).
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            max_connections=10,
            max_keepalive_connections=5,
            keepalive_expiry=5.0,
            network_backend=backend,
        )
