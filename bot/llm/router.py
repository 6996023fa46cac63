"""One provider for every model a deployment serves: each call goes to its model's API.

A deployment may use models of both APIs (`bot.llm.served`): the default, the ones a chat or
a run names, the fallbacks. Each API's provider is made when a model of it is first called,
but the default's, which is made at once, so that a worker imports the SDK it will surely
need while it starts rather than in its first turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

from bot.config.settings import ConfigError
from bot.llm.base import ModelRequest, Provider
from bot.llm.errors import ProviderError
from bot.llm.events import ProviderEvent
from bot.llm.keyring import KeyCount, uncounted
from bot.llm.registry import ModelRef, build_provider
from bot.llm.served import Served


class ModelRouter:
    """A `Provider` that hands each request to the provider of its model's API."""

    name = "router"

    def __init__(self, served: Served, count: KeyCount = uncounted) -> None:
        """`count`: told of each call where an API's setting holds several keys."""
        self.served = served
        self.count = count
        self._providers: dict[str, Provider] = {}
        self._provider(served.ref(served.default))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ProviderEvent]:
        try:
            ref = self.served.ref(request.model)
            provider = self._provider(ref)
        except ConfigError as exc:  # a model no API serves here: asking again will not help
            raise ProviderError(str(exc), status=400) from None
        async for event in provider.stream(replace(request, model=ref.model)):
            yield event

    async def aclose(self) -> None:
        for provider in self._providers.values():
            await provider.aclose()

    def _provider(self, ref: ModelRef) -> Provider:
        if ref.provider not in self._providers:
            self._providers[ref.provider] = build_provider(self.served.settings, ref, self.count)
        return self._providers[ref.provider]
