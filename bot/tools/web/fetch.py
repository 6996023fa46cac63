"""Getting a page's bytes: one GET per hop, every redirect target checked, within limits.

Redirects are followed here, one at a time, rather than by httpx, so each new URL passes the
same checks as the first one (a public page may redirect to http://169.254.169.254/). The
whole fetch, redirects included, has one deadline (`PARLEY_FETCH_TIMEOUT`), and no more than
`PARLEY_FETCH_MAX_BYTES` of a body is read. Requests go straight to the transport, not
through an `httpx.AsyncClient`, which logs every URL it requests: a URL's query string may
hold a token, so only `loggable` forms of URLs are ever logged here.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from urllib.parse import urljoin, urlsplit

import httpcore
import httpx

from bot.tools.base import TemporaryFailure, ToolError
from bot.tools.web.config import FetchLimits
from bot.tools.web.guard import Guard, Resolver, system_resolver
from bot.tools.web.page import Page, refuse_unreadable
from bot.tools.web.pinning import PinnedBackend, PinnedTransport

log = logging.getLogger(__name__)
REDIRECTS = frozenset({301, 302, 303, 307, 308})
TRANSIENT = frozenset({502, 503, 504})
USER_AGENT = "Parley/0.1 (web_fetch; a self-hosted chat agent)"
CHUNK = 64 * 1024


def loggable(url: str) -> str:
    """`url` without its query, fragment and user info: fit for a log line."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def checked_url(url: str, guard: Guard) -> httpx.URL:
    """`url` if it may be requested at all: http(s), no credentials, a host the guard lets
    through before resolving it."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 (a bad port raises here)
    except ValueError:
        raise ToolError("Not a valid URL.") from None
    if parts.scheme not in ("http", "https"):
        raise ToolError(f"Only http and https URLs can be fetched, not {parts.scheme or 'this'!r}.")
    if "@" in parts.netloc or parts.username is not None:
        raise ToolError("URLs with credentials (user:password@) are not fetched.")
    if not parts.hostname:
        raise ToolError("The URL has no host.")
    if "\\" in url or any(ch.isspace() or ord(ch) < 32 for ch in url.strip()):
        raise ToolError("The URL holds characters (spaces, backslashes) it may not hold.")
    guard.check_host(parts.hostname)
    try:
        return httpx.URL(url.strip())
    except httpx.InvalidURL as exc:
        raise ToolError(f"Not a valid URL: {exc}.") from None


class Fetcher:
    """One fetch within `limits`. `resolver`, `network` and `ssl_context` are seams for
    tests: how names are resolved, what opens the TCP connection to a checked address, and
    which certificates are trusted."""

    def __init__(
        self,
        limits: FetchLimits,
        *,
        resolver: Resolver = system_resolver,
        network: httpcore.AsyncNetworkBackend | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.limits = limits
        self.guard = Guard(limits.allowlist, resolver)
        self.network = network
        self.ssl_context = ssl_context

    async def fetch(self, url: str) -> Page:
        """The page at `url`, after its redirects. TemporaryFailure for what may pass on
        another try (network errors, timeouts, 502/503/504), ToolError for the rest."""
        transport = PinnedTransport(PinnedBackend(self.guard, self.network), self.ssl_context)
        try:
            async with asyncio.timeout(self.limits.timeout):
                return await self._follow(transport, checked_url(url, self.guard))
        except TimeoutError:
            raise TemporaryFailure(
                f"Fetching {loggable(url)} took longer than {self.limits.timeout:g} s."
            ) from None
        except httpx.ConnectError as exc:
            if "CERTIFICATE_VERIFY_FAILED" in str(exc):  # another try would fail the same way
                raise ToolError(f"{loggable(url)}: its TLS certificate is not valid.") from None
            raise TemporaryFailure(f"Could not connect to {loggable(url)}.") from None
        except (httpx.TransportError, httpx.StreamError) as exc:
            log.info("fetch of %s failed: %s", loggable(url), type(exc).__name__)
            raise TemporaryFailure(f"Could not fetch {loggable(url)}: {describe(exc)}.") from None
        finally:
            await transport.aclose()

    async def _follow(self, transport: PinnedTransport, url: httpx.URL) -> Page:
        seen = {str(url)}
        for _ in range(self.limits.max_redirects + 1):
            response = await self._get(transport, url)
            try:
                target = redirect_target(response, url)
                if target is None:
                    return await self._page(response, url)
            finally:
                await response.aclose()
            following = checked_url(target, self.guard)
            if str(following) in seen:
                raise ToolError(f"{loggable(str(url))} redirects in a loop.")
            seen.add(str(following))
            url = following
        raise ToolError(
            f"Too many redirects (more than {self.limits.max_redirects}) from {loggable(str(url))}."
        )

    async def _get(self, transport: PinnedTransport, url: httpx.URL) -> httpx.Response:
        timeout = self.limits.timeout
        request = httpx.Request(
            "GET",
            url,
            headers={
                "User-Agent": USER_AGENT,
                "Accept": "text/html,application/xhtml+xml,text/plain,application/json;q=0.9,"
                "*/*;q=0.5",
                "Accept-Encoding": "identity",
            },
            extensions={
                "timeout": {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
            },
        )
        response = await transport.handle_async_request(request)
        response.request = request
        return response

    async def _page(self, response: httpx.Response, url: httpx.URL) -> Page:
        status = response.status_code
        where = loggable(str(url))
        if status in TRANSIENT:
            raise TemporaryFailure(f"{where} answered {status} (the server is having trouble).")
        if status >= 400:
            raise ToolError(f"{where} answered {status} {response.reason_phrase}.")
        if status >= 300:
            raise ToolError(f"{where} answered {status} without somewhere to go.")
        media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        refuse_unreadable(media_type, where)
        body, cut = await read_limited(response, self.limits.max_bytes)
        return Page(str(url), media_type, response.charset_encoding, body, cut)


def redirect_target(response: httpx.Response, url: httpx.URL) -> str | None:
    """Where a redirect leads, or None when `response` is not one. Joined as a string, so
    the target meets the guard (`checked_url`) before httpx's parser, which turns some
    spellings of addresses away with a less helpful message."""
    location = response.headers.get("location")
    if response.status_code not in REDIRECTS or not location:
        return None
    return str(urljoin(str(url), location.strip()))


async def read_limited(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of the body, and whether there was more; the rest is not read."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes(CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return b"".join(chunks)[:limit], True
    return b"".join(chunks), False


def describe(exc: Exception) -> str:
    """An httpx error in a few words, without the URL (whose query might hold a token)."""
    kinds = {
        httpx.ConnectTimeout: "the connection timed out",
        httpx.ConnectError: "could not connect",
        httpx.ReadTimeout: "the server stopped sending",
        httpx.RemoteProtocolError: "the server broke off the response",
    }
    for kind, words in kinds.items():
        if isinstance(exc, kind):
            return words
    return type(exc).__name__
