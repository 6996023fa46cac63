"""Web search through the API the operator chose: SearXNG, Brave or Tavily.

Each backend turns a query into `Result`s; the tool only numbers them. The API key goes in a
header and nowhere else: errors say what went wrong (a bad key, a rate limit) without the
request, whose headers hold it, and without the service's answer, which might echo it.
The search URL is the operator's, so it does not pass the fetch guard (a SearXNG on the
local network is the usual case).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from bot.tools.base import TemporaryFailure, ToolError
from bot.tools.web.config import SearchService
from bot.tools.web.pinning import pages_context

BRAVE_URL = "https://api.search.brave.com"
TAVILY_URL = "https://api.tavily.com"
TAGS = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Result:
    title: str
    url: str
    snippet: str


class SearchBackend(Protocol):
    """One search API: how to ask it, and how to read its answer."""

    @property
    def name(self) -> str:
        """The service's name, for messages."""
        ...

    async def search(self, client: httpx.AsyncClient, query: str, count: int) -> list[Result]:
        """Up to `count` results for `query`."""
        ...


def plain(text: Any) -> str:
    """A field of a result as one line of text: tags and entities (Brave marks matches with
    <strong>) removed."""
    if not isinstance(text, str):
        return ""
    return " ".join(html.unescape(TAGS.sub("", text)).split())


def check(response: httpx.Response, name: str) -> Any:
    """The JSON body of a successful answer; a failure as the model should read it."""
    status = response.status_code
    if status in (401, 403):
        raise ToolError(
            f"{name} refused the search ({status}): the API key is missing, wrong or "
            "not allowed to search; the operator must check PARLEY_SEARCH_API_KEY."
        )
    if status == 429:
        raise ToolError(f"{name} is rate limiting searches (429); try again later.")
    if status >= 500:
        raise TemporaryFailure(f"{name} failed to answer ({status}).")
    if status >= 400:
        raise ToolError(f"{name} rejected the search ({status}).")
    try:
        return response.json()
    except ValueError:
        raise TemporaryFailure(f"{name} sent an answer that is not JSON.") from None


def _items(body: Any, *path: str) -> list[dict[str, Any]]:
    for key in path:
        body = body.get(key) if isinstance(body, dict) else None
    return [item for item in body or [] if isinstance(item, dict)]


@dataclass(frozen=True)
class SearxngBackend:
    base_url: str
    name: str = "SearXNG"

    async def search(self, client: httpx.AsyncClient, query: str, count: int) -> list[Result]:
        url = self.base_url.rstrip("/") + "/search"
        response = await client.get(url, params={"q": query, "format": "json"})
        if response.status_code == 403:  # SearXNG's answer when its JSON API is off
            raise ToolError(
                "SearXNG refused the search (403): its JSON API may be off; the operator "
                "must add json to search.formats in its settings.yml."
            )
        items = _items(check(response, self.name), "results")
        return [
            Result(plain(i.get("title")), str(i.get("url", "")), plain(i.get("content")))
            for i in items[:count]
        ]


@dataclass(frozen=True)
class BraveBackend:
    base_url: str
    key: str = field(repr=False)
    name: str = "Brave Search"

    async def search(self, client: httpx.AsyncClient, query: str, count: int) -> list[Result]:
        response = await client.get(
            self.base_url.rstrip("/") + "/res/v1/web/search",
            params={"q": query, "count": count},
            headers={"X-Subscription-Token": self.key, "Accept": "application/json"},
        )
        items = _items(check(response, self.name), "web", "results")
        return [
            Result(plain(i.get("title")), str(i.get("url", "")), plain(i.get("description")))
            for i in items[:count]
        ]


@dataclass(frozen=True)
class TavilyBackend:
    base_url: str
    key: str = field(repr=False)
    name: str = "Tavily"

    async def search(self, client: httpx.AsyncClient, query: str, count: int) -> list[Result]:
        response = await client.post(
            self.base_url.rstrip("/") + "/search",
            json={"query": query, "max_results": count, "search_depth": "basic"},
            headers={"Authorization": f"Bearer {self.key}"},
        )
        items = _items(check(response, self.name), "results")
        return [
            Result(plain(i.get("title")), str(i.get("url", "")), plain(i.get("content")))
            for i in items[:count]
        ]


def backend_for(service: SearchService) -> SearchBackend | None:
    """The service's backend, or None when it lacks what it needs (the settings make sure a
    configured one has its address or key)."""
    key = service.key.get_secret_value() if service.key else ""
    match service.backend:
        case "searxng" if service.url:
            return SearxngBackend(service.url)
        case "brave" if key:
            return BraveBackend(service.url or BRAVE_URL, key)
        case "tavily" if key:
            return TavilyBackend(service.url or TAVILY_URL, key)
    return None


def numbered(results: list[Result], query: str) -> str:
    if not results:
        return f"No results for {query!r}."
    blocks = []
    for number, result in enumerate(results, 1):
        lines = [f"{number}. {result.title or '(no title)'}", f"   {result.url}"]
        if result.snippet:
            lines.append(f"   {result.snippet}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


async def search(service: SearchService, backend: SearchBackend, query: str) -> str:
    """The numbered results of `query`; network failures are TemporaryFailure, so the
    executor tries again."""
    timeout = httpx.Timeout(service.timeout)
    try:
        verify = pages_context(trust_env=True)
        async with httpx.AsyncClient(
            timeout=timeout, follow_redirects=False, verify=verify
        ) as client:
            results = await backend.search(client, query, service.results)
    except httpx.TimeoutException:
        raise TemporaryFailure(f"{backend.name} did not answer in time.") from None
    except httpx.TransportError as exc:
        raise TemporaryFailure(f"Could not reach {backend.name}: {type(exc).__name__}.") from None
    return numbered(results, query)
