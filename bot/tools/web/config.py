"""What the web tools are built with: the fetch's limits and the search service.

Plain data, made from the settings where the tools are put together (`bot.assembly`), so the
tools never see the rest of the settings, and the search key reaches the search tool alone.
Nothing here imports the HTTP client: a worker that never fetches starts without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import SecretStr

from bot.tools.web.guard import Allowlist

Backend = Literal["searxng", "brave", "tavily"]


@dataclass(frozen=True)
class FetchLimits:
    """PARLEY_FETCH_*: the internal hosts `web_fetch` may reach after all, the most bytes of
    a body it reads, the whole fetch's deadline in seconds, and how many redirects it follows."""

    allowlist: Allowlist
    max_bytes: int
    timeout: float
    max_redirects: int


@dataclass(frozen=True)
class SearchService:
    """The search API the operator chose (PARLEY_SEARCH_*): its kind, its address (None for
    a service's own), its key (never shown: `SecretStr`), how many results to give, and how
    long to wait for its answer (PARLEY_FETCH_TIMEOUT)."""

    backend: Backend
    url: str | None
    key: SecretStr | None
    results: int
    timeout: float
