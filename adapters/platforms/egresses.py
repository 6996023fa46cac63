"""Which platforms a worker answers on, and where each one's egress is built.

A platform's SDK is imported only when the platform is configured, and then in the
background (see `adapters.platforms.loading`): aiogram takes over a second to import,
slack_sdk about half of one, and a worker's start-up is also its recovery time whenever one
is replaced.
`PLATFORMS` is the one place that names those modules; the HTTP API needs no SDK and is
always answered (see `worker.jobs`).
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol, cast

from redis.asyncio import Redis

from adapters.platforms.loading import LoadingEgress
from bot.config.settings import Settings
from bot.session.egress import Egress


class EgressBuilder(Protocol):
    """How the registry builds every platform's egress."""

    def __call__(self, settings: Settings, redis: Redis) -> Egress: ...


@dataclass(frozen=True)
class Platform:
    name: str  # the envelopes' `platform`
    builder: str  # "module:function" building its egress, imported on first use
    configured: Callable[[Settings], bool]


PLATFORMS = (
    Platform(
        "telegram",
        "adapters.telegram.egress:build_egress",
        lambda settings: settings.telegram_bot_token is not None,
    ),
    Platform(
        "slack",
        "adapters.slack.egress:build_egress",
        lambda settings: settings.slack_bot_token is not None,
    ),
)

if TYPE_CHECKING:  # mypy checks that each builder fits, without importing an SDK at run time
    from adapters.slack.egress import build_egress as slack
    from adapters.telegram.egress import build_egress as telegram

    _BUILDERS: tuple[EgressBuilder, ...] = (telegram, slack)


def egress_builder(platform: Platform) -> EgressBuilder:
    """The function building `platform`'s egress, importing its module (and SDK) now."""
    module, _, attribute = platform.builder.partition(":")
    return cast(EgressBuilder, getattr(importlib.import_module(module), attribute))


def configured_egresses(
    settings: Settings, redis: Redis, begin: asyncio.Event | None = None
) -> dict[str, LoadingEgress]:
    """The egress of each configured platform, by name, each loading in a thread from when
    `begin` is set (from now on without one). Call it on the worker's event loop."""
    return {
        platform.name: LoadingEgress(
            platform.name, partial(_load, platform, settings, redis), begin
        )
        for platform in PLATFORMS
        if platform.configured(settings)
    }


def _load(platform: Platform, settings: Settings, redis: Redis) -> Callable[[], Egress]:
    """Import `platform`'s egress (run in a thread); what it returns builds it on the loop."""
    build = egress_builder(platform)
    return partial(build, settings, redis)
