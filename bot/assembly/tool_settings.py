"""What Parley's own tools are built with, taken from the settings: each tool gets the few
values it needs as a small typed object, and none of them sees the settings whole (their
API keys among them).
"""

from __future__ import annotations

from bot.config.settings import Settings
from bot.sandbox.limits import SandboxLimits
from bot.tasks.tools import TaskRules
from bot.tools.python import EXTRA_SECONDS
from bot.tools.web.config import FetchLimits, SearchService
from bot.tools.web.guard import Allowlist
from bot.tools.workspace import WorkspaceLimits

MB = 1_048_576


def fetch_limits(settings: Settings) -> FetchLimits:
    """`web_fetch`'s limits; a bad PARLEY_FETCH_ALLOW_HOSTS entry is a ConfigError here, so
    the process stops at start rather than at the first fetch."""
    return FetchLimits(
        allowlist=Allowlist.parse(settings.fetch_allow_hosts),
        max_bytes=settings.fetch_max_bytes,
        timeout=settings.fetch_timeout,
        max_redirects=settings.fetch_max_redirects,
    )


def search_service(settings: Settings) -> SearchService | None:
    """The search API `web_search` is built with, None without PARLEY_SEARCH_BACKEND."""
    if settings.search_backend is None:
        return None
    return SearchService(
        backend=settings.search_backend,
        url=settings.search_url,
        key=settings.search_api_key,
        results=settings.search_results,
        timeout=settings.fetch_timeout,
    )


def workspace_limits(settings: Settings) -> WorkspaceLimits:
    return WorkspaceLimits(
        quota=int(settings.workspace_quota_mb * MB), output_limit=settings.tool_output_limit
    )


def sandbox_limits(settings: Settings) -> tuple[SandboxLimits, float]:
    """`run_python`'s sandbox limits, and a timeout for its calls that outlasts them."""
    timeout = max(settings.tool_timeout, settings.sandbox_timeout + EXTRA_SECONDS)
    return SandboxLimits.from_settings(settings), timeout


def task_rules(settings: Settings) -> TaskRules:
    return TaskRules(min_interval=settings.task_min_interval, per_person=settings.tasks_per_person)
