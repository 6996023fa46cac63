"""A run's token budget (`RunConfig.token_budget`): what a helper may spend of its
parent's, or an API run of its own.

The budget holds before each model call, not after: a call is made only when what the
request is estimated to read (its system prompt, tools and messages, about four characters
a token, with a margin) leaves room for an answer, and its answer is capped at the room
left. So a run stops short of its budget rather than past it, short by at most the
estimate's error.
"""

from __future__ import annotations

from dataclasses import replace

from bot.agent.compaction import estimate_tokens, overhead_tokens
from bot.llm.base import ModelRequest
from bot.vocabulary.usage import Usage

MIN_ANSWER = 64  # tokens: room for less than this is no room for an answer
# What a request's estimate is taken as, to be safe: four characters a token is close for
# prose, but JSON (tool schemas, arguments, results) packs fewer characters in a token.
SAFETY = 1.25


def spent(usage: Usage) -> int:
    """Every token the run's model calls read or wrote."""
    return usage.prompt_tokens + usage.output_tokens


def reads(request: ModelRequest) -> int:
    """About how many tokens `request` makes the model read."""
    return int((overhead_tokens(request) + estimate_tokens(request.messages)) * SAFETY)


def within(budget: int | None, usage: Usage, request: ModelRequest) -> ModelRequest | None:
    """`request` with its answer capped at what the budget leaves, or None when the budget
    leaves no room for it; unchanged without a budget."""
    if budget is None:
        return request
    room = budget - spent(usage) - reads(request)
    if room < MIN_ANSWER:
        return None
    return replace(request, max_tokens=min(request.max_tokens, room))


def notice(budget: int) -> str:
    return (
        f"I stopped here: this run may use {budget:,} tokens, and another step would have "
        "gone past them."
    )
