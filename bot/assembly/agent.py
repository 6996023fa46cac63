"""Building an `Agent` from `Settings`: the one place that knows how the parts fit."""

from __future__ import annotations

import asyncio
import functools
import importlib
import logging
from collections.abc import Iterable

from bot.agent.attachments import Attachments, SendLimits
from bot.agent.compaction import Compactor
from bot.agent.deps import AgentDeps
from bot.agent.loop import Agent
from bot.agent.prompt import Bootstrap, PromptBuilder
from bot.assembly.catalog import RESERVED, delegation, standard_tools
from bot.assembly.delegate import HelperLink
from bot.assembly.stores import ToolStores
from bot.assembly.tool_settings import send_file_limit, tool_config, unclaimed
from bot.config.settings import ConfigError, Settings
from bot.files.reading import Readers, ReadLimits
from bot.llm.base import Provider
from bot.llm.registry import context_window
from bot.llm.retry import RetryPolicy, Sleep
from bot.llm.router import ModelRouter
from bot.llm.served import Served
from bot.skills.library import Skills
from bot.skills.tools import SkillTools
from bot.tools.base import Tool, ToolRegistry
from bot.tools.executor import ToolExecutor
from bot.tools.policy import Policy

log = logging.getLogger(__name__)
_SAID: set[str] = set()  # the lines about the tools' settings this process said already


def load_tool_modules(names: Iterable[str]) -> list[Tool]:
    """Extra tools from `PARLEY_TOOL_MODULES`: each module lists its tools in `TOOLS`."""
    found: list[Tool] = []
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            raise ConfigError(f"PARLEY_TOOL_MODULES: cannot import {name!r}: {exc}") from None
        except Exception as exc:  # the module itself fails: a bug there, named in one line
            problem = str(exc).splitlines()[0] if str(exc) else ""
            raise ConfigError(
                f"PARLEY_TOOL_MODULES: importing {name!r} failed: {type(exc).__name__}: {problem}"
            ) from None
        tools = getattr(module, "TOOLS", None)
        if not isinstance(tools, list) or not all(isinstance(t, Tool) for t in tools):
            raise ConfigError(f"PARLEY_TOOL_MODULES: {name!r} has no TOOLS list of tools")
        found += tools
    return found


def configured_tools(
    settings: Settings, stores: ToolStores | None = None, helpers: HelperLink | None = None
) -> list[Tool]:
    """Parley's own tools (`bot.assembly.catalog.standard_tools`) and those of
    `PARLEY_TOOL_MODULES`. A module's tool may not take the name of one of Parley's, also of
    one not offered here for want of `stores` or `helpers`: the same modules must load in
    every process."""
    extra = load_tool_modules(settings.tool_modules)
    for item in extra:
        if item.name in RESERVED:
            raise ConfigError(f"PARLEY_TOOL_MODULES: tool {item.name!r} is registered twice")
    return [*standard_tools(settings, stores, helpers), *extra]


def worker_registry(settings: Settings) -> ToolRegistry:
    """The tools a worker's agent is built on, Parley's own and those of
    `PARLEY_TOOL_MODULES`, for a process that counts them and runs no turn (`parley
    doctor`): on stores that reach nothing, `delegate` on a link to no helpers."""
    return tool_registry(configured_tools(settings, ToolStores.unopened(), HelperLink()))


def tool_registry(tools: Iterable[Tool]) -> ToolRegistry:
    try:
        return ToolRegistry(tools)
    except ValueError as exc:  # two tools of one name
        raise ConfigError(f"PARLEY_TOOL_MODULES: {exc}") from None


def tool_executor(settings: Settings, registry: ToolRegistry) -> ToolExecutor:
    """The executor over `registry`, with the settings' limits, threads and processes, and
    the tools' own settings (`PARLEY_TOOL_<NAME>_<KEY>`) read now, once. One that no tool
    here claims is said, once a process, as the settings' own mistakes are."""
    config = tool_config()
    for line in unclaimed(config, registry.names):
        if line not in _SAID:
            _SAID.add(line)
            log.warning(line)
    return ToolExecutor(
        registry,
        timeout=settings.tool_timeout,
        concurrency=settings.tool_concurrency,
        output_limit=settings.tool_output_limit,
        threads=settings.tool_threads,
        processes=settings.tool_processes,
        config=config,
    )


def build_agent(
    settings: Settings,
    *,
    stores: ToolStores | None = None,
    tools: Iterable[Tool] | None = None,
    provider: Provider | None = None,
    sleep: Sleep = asyncio.sleep,
    helpers: HelperLink | None = None,
) -> Agent:
    """The agent for `settings`, with the tools that reach the database where there are
    `stores` (a worker's), and `delegate` where there are `helpers` to run (a worker's,
    unless PARLEY_DELEGATE_DEPTH is 0); raises ConfigError for an unknown model or a
    missing key."""
    served = Served.of(settings)
    served.check()
    provider = provider or ModelRouter(served)
    if tools is None:
        chosen = configured_tools(settings, stores, helpers)
    else:
        chosen = [*tools, *delegation(settings, helpers)]
    registry = tool_registry(chosen)
    retry = RetryPolicy(
        attempts=settings.llm_attempts,
        backoff_base=settings.llm_backoff_base,
        backoff_max=settings.llm_backoff_max,
        max_retry_after=settings.llm_max_retry_after,
    )
    compactor = Compactor(
        provider,
        retry,
        sleep,
        window=functools.partial(context_window, settings),
        threshold=settings.compact_threshold,
        keep_turns=settings.compact_keep_turns,
        max_tokens=settings.max_tokens,
    )
    executor = tool_executor(settings, registry)
    skills = Skills.of(settings)
    skills.load()  # at start: a bad skill is said now, in one line each
    bootstrap = Bootstrap(settings.bootstrap_dir)
    bootstrap.load()
    registry.add_source(SkillTools(skills, stores.chats if stores is not None else None))
    return Agent(
        AgentDeps(
            settings=settings,
            provider=provider,
            model=served.default,
            fallbacks=served.fallbacks,
            tools=registry,
            executor=executor,
            policy=Policy(settings.policy, settings.allowed_users),
            prompt=PromptBuilder(bootstrap, skills),
            compactor=compactor,
            retry=retry,
            sleep=sleep,
            attachments=attachments(settings),
        )
    )


def attachments(settings: Settings) -> Attachments:
    """Where the files tools make go (the file store every process reads), and their limits."""
    limits = SendLimits(send_file_limit(settings), settings.send_files_per_turn)
    return Attachments(Readers(settings.files_dir, ReadLimits.of(settings), ahead=True), limits)
