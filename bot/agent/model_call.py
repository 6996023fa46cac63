"""One model call inside a turn: stream it, retry it, fail over, and collect what it produced."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace

from bot.agent.cancel import until_cancelled
from bot.llm import events as llm
from bot.llm.base import ModelRequest, Provider
from bot.llm.errors import ProviderError
from bot.llm.retry import RetryPolicy, Sleep, stream_with_retries
from bot.vocabulary import events as ev
from bot.vocabulary.messages import ThinkingBlock, Thought
from bot.vocabulary.run_config import Reasoning
from bot.vocabulary.usage import Usage

# The request made fit for the model it names (its context folded for that model's window),
# yielded last after what happened meanwhile (`bot.agent.loop`: compaction's events).
Fit = Callable[[ModelRequest], AsyncIterator[ev.AgentEvent | ModelRequest]]


@dataclass
class ModelOutcome:
    """What one model call produced. `finish_reason` is None when the call was cancelled
    mid-stream (the text so far is kept for the caller to save, and the usage its provider
    had said by then is charged to the run); `error` is set when the provider failed beyond
    its retries, and `rejected` when it refused the request as invalid, which asking again
    would not change."""

    model: str = ""  # the model that made it (a fallback, when the asked one failed)
    parts: list[str] = field(default_factory=list)
    thoughts: list[Thought] = field(default_factory=list)
    calls: list[llm.ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    error: str | None = None
    rejected: bool = False

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def reset(self) -> None:
        self.parts.clear()
        self.thoughts.clear()
        self.calls.clear()
        self.usage = Usage()


async def call_model(
    provider: Provider,
    request: ModelRequest,
    retry: RetryPolicy,
    sleep: Sleep,
    cancel: asyncio.Event | None,
    *,
    shown: Reasoning = "off",
    fallbacks: Sequence[str] = (),
    fit: Fit | None = None,
) -> AsyncIterator[ev.AgentEvent | ModelOutcome]:
    """Stream `request`, yielding loop events as they come and, last, the `ModelOutcome`.

    When `cancel` is set mid-stream the call stops where it is and the outcome says so. The
    model's thinking is kept in the outcome, and `shown` as it comes (`stream`), each
    thought whole once it ends (`on`), or not at all. A model that stays overloaded, rate
    limited or out of reach after its retries hands the call to the next of `fallbacks`,
    which makes it again from its start: what the failed one showed is taken back first, and
    the request is made to `fit` the fallback first (its window may be smaller).
    """
    outcome = ModelOutcome(model=request.model)
    yield ev.StateChanged(layer="call", state=ev.CallState.CALLING)
    chain = [request.model, *(model for model in fallbacks if model != request.model)]
    for index, model in enumerate(chain):
        outcome.model = model
        asked = replace(request, model=model)
        if index and fit is not None:
            async for item in fit(asked):
                if isinstance(item, ModelRequest):
                    asked = item
                else:
                    yield item
        try:
            async for event in _streamed(provider, asked, retry, sleep, cancel, shown, outcome):
                yield event
            break
        except ProviderError as exc:
            if index + 1 == len(chain) or not exc.retryable:
                outcome.error, outcome.rejected = str(exc), exc.invalid_request
                break
            yield ev.FailedOver(failed=model, model=chain[index + 1], error=str(exc))
            if outcome.parts or outcome.thoughts:
                yield ev.TextReset(reason="the call is made again on another model")
            outcome.reset()
    yield outcome


async def _streamed(
    provider: Provider,
    request: ModelRequest,
    retry: RetryPolicy,
    sleep: Sleep,
    cancel: asyncio.Event | None,
    shown: Reasoning,
    outcome: ModelOutcome,
) -> AsyncIterator[ev.AgentEvent]:
    """One model's attempts at the call, into `outcome`; ProviderError once they failed."""
    streaming = False
    source = stream_with_retries(provider, request, retry, sleep)
    async for event in until_cancelled(source, cancel):
        if isinstance(event, llm.TextDelta):
            if not streaming:
                streaming = True
                yield ev.StateChanged(layer="call", state=ev.CallState.STREAMING)
            outcome.parts.append(event.text)
            yield ev.TextDelta(text=event.text)
        elif isinstance(event, llm.ThinkingDelta | llm.ThoughtDone):
            thought = _thought(event, outcome, shown)
            if thought is not None:
                yield thought
        elif isinstance(event, llm.ToolCall):
            outcome.calls.append(event)
        elif isinstance(event, Usage):
            outcome.usage = event
        elif isinstance(event, llm.Finished):
            outcome.finish_reason = event.reason
        elif isinstance(event, llm.Retrying):
            streaming = False
            yield ev.StateChanged(layer="call", state=ev.CallState.RETRYING)
            yield ev.Retrying(attempt=event.attempt, delay=event.delay, error=event.error)
        elif isinstance(event, llm.Reset):
            outcome.reset()
            yield ev.TextReset(reason="the model call is being retried")


def _thought(
    event: llm.ThinkingDelta | llm.ThoughtDone, outcome: ModelOutcome, shown: Reasoning
) -> ev.ThinkingDelta | None:
    """Keep a whole thought; what is to be shown of it now, if anything."""
    if isinstance(event, llm.ThinkingDelta):
        return ev.ThinkingDelta(text=event.text) if shown == "stream" else None
    outcome.thoughts.append(event.block)
    block = event.block
    if shown == "on" and isinstance(block, ThinkingBlock) and block.thinking:
        return ev.ThinkingDelta(text=block.thinking)
    return None
