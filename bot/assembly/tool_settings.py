"""What Parley's own tools are built with, taken from the settings: each tool gets the few
values it needs as a small typed object, and none of them sees the settings whole (their
API keys among them). The tools' own namespaces (`PARLEY_TOOL_<NAME>_<KEY>`) are read here
too, once, for the executor to hand out call by call.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from dotenv import dotenv_values

from bot.config.settings import Settings
from bot.config.warnings import ENV_FILE, unclaimed_variables
from bot.sandbox.limits import SandboxLimits
from bot.tasks.tools import TaskRules
from bot.tools.config import ToolConfig, namespace
from bot.tools.images import OPENAI, ImageService
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


def image_service(settings: Settings) -> ImageService | None:
    """The images endpoint `generate_image` is built with, None without PARLEY_IMAGE_MODEL;
    its key is PARLEY_IMAGE_API_KEY, else OPENAI_API_KEY for OpenAI's endpoint alone."""
    if settings.image_model is None:
        return None
    return ImageService(
        model=settings.image_model,
        base_url=settings.image_base_url or OPENAI,
        key=settings.image_key,
        timeout=settings.image_timeout,
        max_bytes=send_file_limit(settings),
    )


def workspace_limits(settings: Settings) -> WorkspaceLimits:
    return WorkspaceLimits(
        quota=int(settings.workspace_quota_mb * MB), output_limit=settings.tool_output_limit
    )


def send_file_limit(settings: Settings) -> int:
    """The largest file the agent sends, in bytes (PARLEY_SEND_FILE_MB)."""
    return int(settings.send_file_mb * MB)


def sandbox_limits(settings: Settings) -> tuple[SandboxLimits, float]:
    """`run_python`'s sandbox limits, and a timeout for its calls that outlasts them."""
    timeout = max(settings.tool_timeout, settings.sandbox_timeout + EXTRA_SECONDS)
    return SandboxLimits.from_settings(settings), timeout


def task_rules(settings: Settings) -> TaskRules:
    return TaskRules(
        min_interval=settings.task_min_interval,
        per_person=settings.tasks_per_person,
        tokens_per_day=settings.task_tokens_per_day,
    )


def tool_config(
    environ: Mapping[str, str] = os.environ, env_file: Path | None = ENV_FILE
) -> ToolConfig:
    """The tools' own settings, from `.env` and the environment (which wins), as Parley's
    settings are read; once, when a process builds its executor."""
    found: Mapping[str, str | None] = {}
    if env_file is not None and env_file.is_file():
        found = dotenv_values(env_file)
    return ToolConfig.read(found, environ)


def unclaimed(config: ToolConfig, tools: Iterable[str]) -> list[str]:
    """A warning line for each of `config`'s variables that no setting reads and none of
    `tools` claims (`bot.config.warnings`: the settings' own check leaves them to this)."""
    starts = [namespace(name) for name in tools]
    return unclaimed_variables(
        config.variables,
        lambda name: any(name.startswith(start) and name != start for start in starts),
    )
