"""`parley doctor` from start to end: the settings first, then every other check at once,
each within its deadline, then the checklist.

Which checks run: the configuration, Redis (its version, persistence and eviction policy),
the database and its schema, Telegram and Slack where their tokens are set, the embedding
model of memory by meaning (one text embedded) and the digests' model, each MCP server
of `mcp.json`, `run_python`'s sandbox, and, only when asked (`--model`), one call of the
default model. `--skip NAME` leaves a check out, listed as skipped.

Logging is off while it runs: the checklist is the command's whole output, and the checks
call code that would log what the checklist already says (Redis persisting nothing, an MCP
server down), in the processes' words rather than with its fix.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from dotenv import dotenv_values

from bot.config.settings import ConfigError, Settings
from bot.config.warnings import ENV_FILE
from bot.telemetry.logs import secrets_of
from worker.doctor import mcp_servers, memory, model, platforms, stores
from worker.doctor.checks import Check, Run, run_all
from worker.doctor.configuration import CHECK as CONFIGURATION
from worker.doctor.configuration import STUCK as CONFIGURATION_STUCK
from worker.doctor.configuration import check_configuration, load
from worker.doctor.report import SECRET_NAME, Finding, Scrub, skipped
from worker.doctor.sandbox import STUCK as SANDBOX_STUCK
from worker.doctor.sandbox import check_sandbox

NAMES = (
    "configuration", "redis", "database", "telegram", "slack", "model", "memory", "mcp",
    "sandbox",
)  # fmt: skip
TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Options:
    """What the command line asked for."""

    model: bool = False
    skip: frozenset[str] = field(default_factory=frozenset)
    timeout: float = TIMEOUT_S


@dataclass
class Outcome:
    findings: list[Finding]
    scrub: Scrub


def examine(options: Options) -> Outcome:
    """Run the doctor; its findings, and the scrub every line must go through."""
    scrub = Scrub(_env_file_secrets())
    logging.disable(logging.CRITICAL)
    try:
        settings = load()
        if not isinstance(settings, Settings):
            rest = [skipped(name, "needs a configuration that reads") for name in NAMES[1:]]
            return Outcome([settings, *rest], scrub)
        scrub.add(secrets_of(settings))
        return Outcome(asyncio.run(_diagnose(settings, options, scrub)), scrub)
    finally:
        logging.disable(logging.NOTSET)


async def _diagnose(settings: Settings, options: Options, scrub: Scrub) -> list[Finding]:
    checks, known = _plan(settings, options, scrub)
    found = known + await run_all(checks, options.timeout)
    return sorted(found, key=_place)


def _place(finding: Finding) -> int:
    """Where a finding goes in the checklist: with its family (`redis persistence` with
    `redis`), in the order of `NAMES`."""
    family = finding.check.split()[0]
    return NAMES.index(family) if family in NAMES else len(NAMES)


def _plan(settings: Settings, options: Options, scrub: Scrub) -> tuple[list[Check], list[Finding]]:
    """The checks to run, and the findings known without running anything (skipped ones)."""
    planned = _checks(settings, options)
    known: list[Finding] = [] if options.model else [model.not_asked()]
    try:
        config = mcp_servers.mcp_config(settings)
    except ConfigError as exc:
        known.append(mcp_servers.config_failure(exc))
    else:
        if config is None:
            known.append(mcp_servers.no_config())
        else:
            scrub.add(secret for server in config.servers.values() for secret in server.secrets())
            planned["mcp"] = mcp_servers.mcp_checks(config, settings)
    checks = []
    for name in NAMES:
        if name in options.skip:
            known = [finding for finding in known if finding.check.split()[0] != name]
            known.append(skipped(name, "left out (--skip)"))
        else:
            checks += planned.get(name, [])
    return checks, known


def _checks(settings: Settings, options: Options) -> dict[str, list[Check]]:
    """The checks of everything but the MCP servers, by name."""

    def on(run: Callable[[Settings], Awaitable[list[Finding]]]) -> Run:
        return lambda: run(settings)

    def redis() -> Awaitable[list[Finding]]:
        return stores.check_redis(settings, options.timeout / 2)  # its own error first

    telegram = Check("telegram", on(platforms.check_telegram), platforms.TELEGRAM_STUCK)
    if settings.telegram_bot_token is not None:
        telegram = replace(telegram, load=platforms.load_telegram)
    slack = Check("slack", on(platforms.check_slack), platforms.SLACK_STUCK)
    if settings.slack_bot_token is not None:
        slack = replace(slack, load=platforms.load_slack)
    planned = {
        CONFIGURATION: [Check(CONFIGURATION, on(check_configuration), CONFIGURATION_STUCK)],
        "redis": [Check("redis", redis, stores.REDIS_STUCK)],
        "database": [Check("database", on(stores.check_database), stores.DATABASE_STUCK)],
        "telegram": [telegram],
        "slack": [slack],
        "memory": [Check(memory.CHECK, on(memory.check_memory), memory.STUCK)],
        "sandbox": [Check("sandbox", check_sandbox, SANDBOX_STUCK)],
    }
    if options.model:
        load = functools.partial(model.load, settings)
        planned["model"] = [Check("model", on(model.check_model), model.STUCK, load)]
    return planned


def _env_file_secrets() -> list[str]:
    """The values in `.env` named like secrets: hidden even where the settings do not read."""
    try:
        values = dotenv_values(ENV_FILE)
    except (OSError, ValueError):
        return []
    return [value for name, value in values.items() if value and SECRET_NAME.search(name)]
