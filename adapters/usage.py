"""The answer to /usage, the same on every platform."""

from __future__ import annotations

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
