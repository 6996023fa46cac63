"""`web_fetch` and `web_search`, as the model sees them.

Both run in a thread of their own (`isolation="thread"`), each call on an event loop of its
own: the fetch is async I/O, but turning HTML into text is lxml work that would stall the
worker's loop, and a thread keeps both off it. Both are read-only, so a TemporaryFailure
(a network error, a 503) is tried again by the executor, and untrusted: what a page or a
search result says reaches the model marked as data, never as instructions. The HTTP
client and the extractor are imported at the first call, in its thread: a worker that
never fetches starts without them. They are built with what they need (`web_tools`): the
fetch's limits, and the search service with its key, which no other tool sees.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bot.tools.base import Tool, ToolContext, ToolError, tool
from bot.tools.web.config import FetchLimits, SearchService


def web_tools(limits: FetchLimits, service: SearchService | None) -> list[Tool]:
    """`web_fetch` within `limits`, and `web_search` only with a search `service`, whose key
    stays in the tool it is given to."""
    fetch = _web_fetch(limits)
    return [fetch] if service is None else [fetch, _web_search(service)]


def _web_fetch(limits: FetchLimits) -> Tool:
    @tool(read_only=True, untrusted=True)
    async def web_fetch(
        ctx: ToolContext,
        url: Annotated[str, Field(description="An http or https URL", max_length=4000)],
    ) -> str:
        """Fetch a web page and return its main text (with its title); plain text and JSON come
        back as they are. Only public addresses can be fetched, and long pages are cut."""
        from bot.tools.web.extract import render  # noqa: PLC0415 (see the module's docstring)
        from bot.tools.web.fetch import Fetcher  # noqa: PLC0415

        page = await Fetcher(limits).fetch(url)
        return render(page)

    return web_fetch


def _web_search(service: SearchService) -> Tool:
    @tool(read_only=True, untrusted=True)
    async def web_search(
        ctx: ToolContext,
        query: Annotated[
            str, Field(description="What to search the web for", min_length=1, max_length=400)
        ],
    ) -> str:
        """Search the web; returns a numbered list of results with title, URL and snippet.
        Use web_fetch on a result's URL to read the page."""
        from bot.tools.web.search import backend_for, search  # noqa: PLC0415

        backend = backend_for(service)
        if backend is None:
            raise ToolError("Web search is not configured (PARLEY_SEARCH_BACKEND).")
        return await search(service, backend, query)

    return web_search
