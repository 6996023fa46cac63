"""Retries owned by Parley rather than the SDKs, so each attempt is visible and resettable.

A model call that fails after it has streamed text is restarted from scratch; the consumer is
told with a `Reset` event to drop what it showed, so no text is ever shown twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from bot.llm.base import ModelRequest, Provider
from bot.llm.errors import ProviderError
from bot.llm.events import ProviderEvent, Reset, Retrying, TextDelta
from bot.vocabulary.usage import Usage

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 3
    backoff_base: float = 1.0
    backoff_max: float = 10.0
    max_retry_after: float = 60.0

    def delay(self, attempt: int, error: ProviderError) -> float | None:
        """Seconds to wait before the next attempt, or None when the error is final."""
        if not error.retryable or attempt >= self.attempts:
            return None
        if error.retry_after is not None:
            if error.retry_after > self.max_retry_after:
                return None
            return error.retry_after
        return min(self.backoff_base * 2.0 ** (attempt - 1), self.backoff_max)


async def stream_with_retries(
    provider: Provider,
    request: ModelRequest,
    policy: RetryPolicy,
    sleep: Sleep = asyncio.sleep,
) -> AsyncIterator[ProviderEvent]:
    """Stream one model call, retrying retryable failures with backoff and retry-after."""
    attempt = 1
    while True:
        emitted = False
        try:
            async for event in provider.stream(request):
                emitted = emitted or not isinstance(event, Usage)  # the usage shows nothing
                yield event
            return
        except ProviderError as error:
            delay = policy.delay(attempt, error)
            if delay is None:
                raise
            yield Retrying(attempt=attempt, delay=delay, error=str(error))
            if emitted:
                yield Reset()
            await sleep(delay)
            attempt += 1


@dataclass(frozen=True)
class Written:
    """What a model call wrote, whole, and the tokens it took."""

    text: str
    usage: Usage


async def written(
    provider: Provider, request: ModelRequest, policy: RetryPolicy, sleep: Sleep = asyncio.sleep
) -> Written:
    """The text one model call writes, retried as a turn's calls are, for the work that
    reads an answer whole rather than showing it (a summary, a digest); raises ProviderError
    when the model cannot answer."""
    parts: list[str] = []
    usage = Usage()
    async for event in stream_with_retries(provider, request, policy, sleep):
        if isinstance(event, TextDelta):
            parts.append(event.text)
        elif isinstance(event, Reset):
            parts.clear()
        elif isinstance(event, Usage):
            usage = event  # each is the call's whole usage so far
    return Written("".join(parts).strip(), usage)
