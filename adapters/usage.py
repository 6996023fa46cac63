"""The answer to /usage, the same on every platform."""

from __future__ import annotations

from bot.store.archive import SessionInfo, Tokens


def usage_text(info: SessionInfo | None, model: str) -> str:
    """Totals come from the record, so they survive /new, restarts and a lost Redis."""
    tokens = info.usage if info is not None else Tokens()
    prompt = tokens.input + tokens.cache_read + tokens.cache_write
    if tokens.cost_usd is not None:
        cost = f"about ${tokens.cost_usd:.4f}"
    elif prompt or tokens.output:
        cost = "cost unknown for this model"
    else:
        cost = "nothing spent yet"
    return (
        f"This chat so far: {prompt:,} tokens in ({tokens.cache_read:,} read from cache, "
        f"{tokens.cache_write:,} written to it), {tokens.output:,} tokens out; {cost}. "
        f"Model: {model}."
    )
