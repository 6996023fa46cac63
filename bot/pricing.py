"""Estimated cost of a session's tokens, from list prices per million tokens.

Prices change and differ by contract, so this is an estimate for people to read ("about
$0.04"), never a bill. Cache reads and writes are priced apart because prompt caching is
what makes long chats cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.llm.events import Usage


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_read: float
    cache_write: float


# By model-name prefix; the longest matching prefix wins.
PRICES: dict[str, Price] = {
    "claude-opus-4-1": Price(15.0, 75.0, 1.5, 18.75),
    "claude-opus-4": Price(5.0, 25.0, 0.5, 6.25),
    "claude-sonnet": Price(3.0, 15.0, 0.3, 3.75),
    "claude-haiku-4": Price(1.0, 5.0, 0.1, 1.25),
    "claude-3-5-haiku": Price(0.8, 4.0, 0.08, 1.0),
    "gpt-5-mini": Price(0.25, 2.0, 0.025, 0.25),
    "gpt-5": Price(1.25, 10.0, 0.125, 1.25),
    "gpt-4.1-mini": Price(0.4, 1.6, 0.1, 0.4),
    "gpt-4.1": Price(2.0, 8.0, 0.5, 2.0),
    "gpt-4o-mini": Price(0.15, 0.6, 0.075, 0.15),
    "gpt-4o": Price(2.5, 10.0, 1.25, 2.5),
}


def price_of(model: str) -> Price | None:
    name = model.rsplit(":", 1)[-1].rsplit("/", 1)[-1].lower()
    matches = [prefix for prefix in PRICES if name.startswith(prefix)]
    return PRICES[max(matches, key=len)] if matches else None


def estimate_cost(model: str, usage: Usage) -> float | None:
    """Dollars for `usage` on `model`, or None when the model's price is unknown."""
    price = price_of(model)
    if price is None:
        return None
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
    ) / 1_000_000
