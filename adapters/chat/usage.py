"""The answer to /usage, the same on every platform."""

from __future__ import annotations

from bot.people.limits import Standing, duration
from bot.store.archive import Tokens


def usage_text(tokens: Tokens | None, model: str, scope: str = "this chat") -> str:
    """Totals come from the record, so they survive /new, restarts and a lost Redis."""
    tokens = tokens or Tokens()
    prompt = tokens.input + tokens.cache_read + tokens.cache_write
    if tokens.cost_usd is not None:
        cost = f"about ${tokens.cost_usd:.4f}"
    elif prompt or tokens.output:
        cost = "cost unknown for this model"
    else:
        cost = "nothing spent yet"
    return (
        f"{scope[:1].upper()}{scope[1:]} so far: {prompt:,} tokens in ({tokens.cache_read:,} "
        f"read from cache, {tokens.cache_write:,} written to it), {tokens.output:,} tokens out; "
        f"{cost}. Model: {model}."
    )


def limits_text(standing: Standing) -> str:
    """The person's own room under their limits; the same limits hold on every platform."""
    if standing.exempt:
        return "Your limits: none (you are an admin)."
    text = (
        f"Your limits: {standing.messages_left} of {standing.messages_limit} messages left "
        "this minute"
    )
    budget = standing.tokens_budget
    if budget is not None:
        left = max(0, budget - standing.tokens_used)
        text += (
            f"; {left:,} of {budget:,} tokens left today (renews at 00:00 UTC, in "
            f"{duration(standing.renews_in)})"
        )
    return text + "."
