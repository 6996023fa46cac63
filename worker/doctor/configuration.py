"""The configuration: the settings read as every process reads them, then what a worker
checks before it runs (a key for each model the settings name, the tool modules loaded
without a clash) with the count of the tools a worker offers (Parley's own, `delegate` and
the database's among them, and the modules'), how many keys an API has where it has several,
whether replies may be said aloud, and what a process would warn about at start
(`bot.config.warnings`).

A setting that cannot be read is the one failure the other checks cannot go past: they are
listed as skipped, and the line names the variable, as `parley web` would.
"""

from __future__ import annotations

import os

from bot.assembly.agent import worker_registry
from bot.config.settings import ConfigError, Settings, load_settings
from bot.config.values import keys_of
from bot.config.warnings import WARNED, settings_warnings
from bot.llm.served import Served
from worker.doctor.checks import in_thread
from worker.doctor.report import Finding, failed, ok, warning

CHECK = "configuration"
STUCK = "check PARLEY_TOOL_MODULES: one of its modules may hang when it is imported"
FIX = "correct the variable named (in the environment, .env or its _FILE): docs/CONFIGURATION.md"


def load() -> Settings | Finding:
    """The settings, or the failed finding that says why there are none."""
    try:
        return load_settings()
    except ConfigError as exc:
        return failed(CHECK, str(exc), FIX)


def _extras(settings: Settings) -> str:
    """What else the line says when it is set: several keys for an API, voice replies."""
    said = [
        f"{len(keys)} {name} keys"
        for name, keys in (
            ("Anthropic", keys_of(settings.anthropic_api_key)),
            ("OpenAI", keys_of(settings.openai_api_key)),
        )
        if len(keys) > 1
    ]
    if settings.speech_model:
        said.append(
            f"voice replies by {settings.speech_model} ({settings.voice_replies} unless chosen)"
        )
    return "".join(f"; {part}" for part in said)


async def check_configuration(settings: Settings) -> list[Finding]:
    try:
        Served.of(settings).check()
        tools = await in_thread(lambda: worker_registry(settings))
    except ConfigError as exc:
        return [failed(CHECK, str(exc), FIX)]
    platforms = [
        name
        for name, token in (
            ("telegram", settings.telegram_bot_token),
            ("slack", settings.slack_bot_token),
        )
        if token is not None
    ]
    found = f"read; PARLEY_MODEL {settings.model}, {len(tools)} tools, platforms: "
    findings = [ok(CHECK, found + ", ".join(["http", *platforms]) + _extras(settings))]
    environ = {k: v for k, v in os.environ.items() if k != WARNED}  # said by a parent or not
    for line in settings_warnings(settings, environ):
        findings.append(warning(CHECK, line, "change it if it is not what you meant"))
    return findings
