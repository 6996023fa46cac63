"""`web_fetch` and `web_search`, as the model sees them.

Both run in a thread of their own (`isolation="thread"`), each call on an event loop of its
own: the fetch is async I/O, but turning HTML into text is lxml work that would stall the
worker's loop, and a thread keeps both off it. Both are read-only, so a TemporaryFailure
(a network error, a 503) is tried again by the executor, and untrusted: what a page or a
search result says reaches the model marked as data, never as instructions. The HTTP
client and the extractor are imported at the first call, in its thread: a worker that
never fetches starts without them.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bot.config.settings import Settings
from bot.tools.base import Tool, ToolContext, ToolError, tool
from bot.tools.web.guard import Allowlist


@tool(read_only=True, untrusted=True)
async def web_fetch(
    ctx: ToolContext,
    url: Annotated[str, Field(description="An http or https URL", max_length=4000)],
) -> str:
    """Fetch a web page and return its main text (with its title); plain text and JSON come
    back as they are. Only public addresses can be fetched, and long pages are cut."""
    from bot.tools.web.extract import render  # noqa: PLC0415 (see the module's docstring)
    from bot.tools.web.fetch import Fetcher  # noqa: PLC0415

    page = await Fetcher(ctx.settings).fetch(url)
    return render(page)


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

    backend = backend_for(ctx.settings)
    if backend is None:
        raise ToolError("Web search is not configured (PARLEY_SEARCH_BACKEND).")
    return await search(ctx.settings, backend, query)


def web_tools(settings: Settings) -> list[Tool]:
    """The web tools these settings offer: web_search only with a search backend. The
    fetch allowlist is read here too, so a bad entry stops the process at start."""
    Allowlist.parse(settings.fetch_allow_hosts)
    return [web_fetch, web_search] if settings.search_backend else [web_fetch]
